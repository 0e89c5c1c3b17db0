#include "worker/source_archive.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libfarm/process/subprocess.h"
#include "nlohmann/json.hpp"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

constexpr char kPypiSimple[] = "https://pypi.org/simple/";

// Runs source_archive.py `args` (written into `dir` first) with `python`: its one JSON line as
// a FetchedArchive in `dir`, or its one error line, prefixed with `what`.
absl::StatusOr<FetchedArchive> RunScript(const std::string& python, std::vector<std::string> args,
                                         const std::string& dir, const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string script = (fs::path(dir) / "source_archive.py").string();
  {
    std::ofstream out(script, std::ios::binary | std::ios::trunc);
    const std::string_view text = SourceArchiveScript();
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot write ", script, ". Fix: give the worker a writable --builds-dir"));
    }
  }
  std::vector<std::string> argv = {python, "-I", script};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = RunCommand(argv, absl::Minutes(15));
  if (!r.ok()) return absl::UnavailableError(absl::StrCat(what, ": ", r.status().message()));
  if (r->exit_code != 0) {
    absl::string_view why = absl::StripAsciiWhitespace(r->stderr_text);
    absl::ConsumePrefix(&why, "error: ");
    return absl::FailedPreconditionError(absl::StrCat(what, ": ", why));
  }
  const auto json = nlohmann::json::parse(r->stdout_text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json["file"].is_string() || !json["sha256"].is_string() ||
      !json["url"].is_string() || !json["size"].is_number_unsigned()) {
    return absl::InternalError(
        absl::StrCat("source_archive.py ", args.front(), " printed no result: ", r->stdout_text));
  }
  FetchedArchive out{.file = json["file"].get<std::string>(),
                     .url = json["url"].get<std::string>(),
                     .sha256 = json["sha256"].get<std::string>(),
                     .size = json["size"].get<uint64_t>()};
  if (out.file.empty() || out.file.find('/') != std::string::npos || out.file[0] == '.') {
    return absl::InternalError(
        absl::StrCat("source_archive.py ", args.front(), " named no plain file: ", out.file));
  }
  out.path = (fs::path(dir) / out.file).string();
  return out;
}

}  // namespace

std::vector<std::string> UnpackArgv() {
  // `python` is the build environment's (first on the build's PATH).
  return {"python", kSourceArchiveScriptInput, "unpack", kSourceArchiveInput, "src"};
}

std::string SdistIndexUrl(const std::string& recipe_index, const std::string& pip_index_url) {
  if (!recipe_index.empty()) return recipe_index;
  return pip_index_url.empty() ? kPypiSimple : pip_index_url;
}

absl::StatusOr<FetchedArchive> FetchSdist(const std::string& python, const std::string& index,
                                          const std::string& project, const std::string& version,
                                          const std::string& dir) {
  return RunScript(python, {"fetch", index, project, version, dir}, dir,
                   absl::StrCat("fetching the sdist of ", project, " ", version));
}

absl::StatusOr<FetchedArchive> DownloadArchive(const std::string& python, const std::string& url,
                                               const std::string& sha256, const std::string& dir) {
  return RunScript(python, {"download", url, sha256, dir}, dir,
                   absl::StrCat("downloading the source archive ", url));
}

}  // namespace farm::worker
