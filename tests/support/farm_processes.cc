#include "tests/support/farm_processes.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libfarm/files/json_file.h"
#include "libfarm/net/address.h"

namespace farm::testing {
namespace fs = std::filesystem;

std::string FarmBinary(const std::string& name) { return (fs::path(FARM_BIN_DIR) / name).string(); }

TempDir::TempDir(const std::string& label) {
  std::random_device rd;
  path_ = fs::temp_directory_path() /
          absl::StrCat("wheelfarm-", label, "-", ::getpid(), "-", rd() % 1000000);
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return condition();
}

absl::StatusOr<CoordinatorProcess> CoordinatorProcess::Start(
    const std::string& data_dir, const std::vector<std::string>& extra_args,
    const std::string& listen, const std::string& http_listen) {
  CoordinatorProcess c;
  const std::string ready = data_dir + ".ready";
  fs::remove(ready);
  c.log_ = data_dir + ".log";
  std::vector<std::string> argv = {FarmBinary("farm-coordinator"),
                                   "--data-dir",
                                   data_dir,
                                   "--listen",
                                   listen,
                                   "--http-listen",
                                   http_listen,
                                   "--ready-file",
                                   ready};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  auto p = Subprocess::Spawn(argv, {.log_path = c.log_});
  if (!p.ok()) return p.status();
  c.process_ = *p;
  absl::StatusOr<nlohmann::json> info = absl::NotFoundError("");
  const bool ready_in_time = WaitFor(
      [&] {
        if (c.process_->Wait(absl::ZeroDuration())) return true;
        info = ReadJsonFile(ready);
        return info.ok();
      },
      absl::Seconds(30));
  if (!ready_in_time || !info.ok()) {
    c.process_->Signal(SIGKILL);
    c.process_->Wait(absl::Seconds(5));
    return absl::UnavailableError(
        absl::StrCat("coordinator did not start; log:\n", ReadFile(c.log_)));
  }
  c.grpc_ = info->value("grpc", "");
  c.http_ = info->value("http", "");
  c.token_file_ = info->value("token_file", "");
  return c;
}

int CoordinatorProcess::port() const { return ParseHostPort(grpc_)->port; }

absl::StatusOr<WorkerProcess> WorkerProcess::Start(const std::string& coordinator,
                                                   const std::string& token_file,
                                                   const std::string& name, const std::string& dir,
                                                   const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = {FarmBinary("farm-worker"),
                                   "--coordinator",
                                   coordinator,
                                   "--token-file",
                                   token_file,
                                   "--name",
                                   name,
                                   "--work-dir",
                                   dir + "/" + name};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  return Spawn(argv, dir + "/" + name + ".log");
}

absl::StatusOr<WorkerProcess> WorkerProcess::Spawn(const std::vector<std::string>& argv,
                                                   const std::string& log_path) {
  WorkerProcess w;
  w.log_ = log_path;
  auto p = Subprocess::Spawn(argv, {.log_path = w.log_});
  if (!p.ok()) return p.status();
  w.process_ = *p;
  return w;
}

CommandResult RunFarmctl(const std::vector<std::string>& args, const std::vector<std::string>& env,
                         absl::Duration timeout) {
  std::vector<std::string> argv = {FarmBinary("farmctl")};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = RunCommand(argv, timeout, env);
  if (!r.ok()) return CommandResult{-1, "", std::string(r.status().message())};
  return *r;
}

nlohmann::json ListWorkersJson(const std::string& coordinator, const std::string& token_file) {
  CommandResult r =
      RunFarmctl({"--coordinator", coordinator, "--token-file", token_file, "--json", "workers"});
  if (r.exit_code != 0) return nlohmann::json::array();
  auto j = nlohmann::json::parse(r.stdout_text, nullptr, false);
  return j.is_array() ? j : nlohmann::json::array();
}

std::string StateOf(const nlohmann::json& workers, const std::string& name) {
  for (const auto& w : workers) {
    if (w.value("name", "") == name) return w.value("state", "");
  }
  return "";
}

void LeaveVirtualenvs() {
  const char* path = std::getenv("PATH");
  std::vector<std::string> stock;
  for (absl::string_view d :
       absl::StrSplit(path == nullptr ? "/usr/bin:/bin" : path, ':', absl::SkipEmpty())) {
    if (!fs::exists(fs::path(std::string(d)).parent_path() / "pyvenv.cfg")) stock.emplace_back(d);
  }
  setenv("PATH", absl::StrJoin(stock, ":").c_str(), 1);
  unsetenv("VIRTUAL_ENV");
  unsetenv("PYTHONPATH");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteText(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string Output(const CommandResult& r) {
  return absl::StrCat("exit ", r.exit_code, "\nstdout:\n", r.stdout_text, "\nstderr:\n",
                      r.stderr_text);
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

void CoordinatorProcess::Stop() {
  process_->Signal(SIGKILL);
  process_->Wait(absl::Seconds(5));
}

void WorkerProcess::Stop() {
  process_->Signal(SIGKILL);
  process_->Wait(absl::Seconds(5));
}

size_t FilesUnder(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    n += it->is_regular_file() ? 1 : 0;
  }
  return n;
}

int CountOccurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

namespace {

// The word that follows the first `marker` in `text`; "" when there is none.
std::string WordAfter(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = at + marker.size();
  return text.substr(start, text.find_first_of(" \n", start) - start);
}

}  // namespace

std::string LoggedCompileCacheKey(const std::string& stderr_text) {
  return WordAfter(stderr_text, "whole-compile key ");
}

std::string SubmittedBuildId(const CommandResult& r) {
  return WordAfter(r.stdout_text, "submitted build ");
}

}  // namespace farm::testing
