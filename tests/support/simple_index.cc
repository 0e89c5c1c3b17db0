#include "tests/support/simple_index.h"

#include <csignal>
#include <fstream>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libfarm/digest/digest.h"

namespace farm::testing {

namespace fs = std::filesystem;

absl::StatusOr<SimpleIndex> SimpleIndex::Start(const fs::path& root) {
  if (!fs::exists("/usr/bin/python3")) {
    return absl::FailedPreconditionError("a SimpleIndex needs /usr/bin/python3");
  }
  fs::create_directories(root / "simple");
  fs::create_directories(root / "files");
  const std::string log = (root / "server.log").string();
  auto server = Subprocess::Spawn({"/usr/bin/python3", "-u", "-m", "http.server", "0", "--bind",
                                   "127.0.0.1", "--directory", root.string()},
                                  {.log_path = log});
  if (!server.ok()) return server.status();
  const std::regex port("port ([0-9]+)");
  for (int i = 0; i < 200; ++i) {
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    if (std::smatch m; std::regex_search(text, m, port)) {
      return SimpleIndex(root, std::move(*server),
                         absl::StrCat("http://127.0.0.1:", m[1].str(), "/simple/"));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  server->Signal(SIGKILL);
  server->Wait(absl::Seconds(5));
  return absl::DeadlineExceededError(absl::StrCat("http.server printed no port in ", log));
}

SimpleIndex::~SimpleIndex() {
  if (!server_) return;
  server_->Signal(SIGKILL);
  server_->Wait(absl::Seconds(5));
}

std::string SimpleIndex::Publish(const std::string& project, const fs::path& file,
                                 const std::string& fragment) {
  const std::string name = file.filename().string();
  fs::copy_file(file, root_ / "files" / name, fs::copy_options::overwrite_existing);
  auto digest = DigestOfFile((root_ / "files" / name).string());
  const std::string sha256 = digest.ok() ? digest->hash() : "";
  const std::string hash = fragment == "sha256" ? absl::StrCat("#sha256=", sha256) : fragment;
  fs::create_directories(root_ / "simple" / project);
  std::ofstream(root_ / "simple" / project / "index.html")
      << "<!DOCTYPE html>\n<html><body>\n<a href=\"../../files/" << name << hash << "\">" << name
      << "</a>\n</body></html>\n";
  return sha256;
}

}  // namespace farm::testing
