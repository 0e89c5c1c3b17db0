// Real farm processes for integration tests: a coordinator and workers on loopback with
// ephemeral ports, started from the built binaries, each in its own temp directory. These are
// the building blocks of TestFarm (test_farm.h), the fixture every suite starts its farm with;
// a test uses them directly only to drive one process by hand.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libfarm/process/process_table.h"
#include "libfarm/process/subprocess.h"

namespace farm::testing {

// Path of a binary built by this project (farm-coordinator, farm-worker, farmctl).
std::string FarmBinary(const std::string& name);

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& label);
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& child) const { return (path_ / child).string(); }

 private:
  std::filesystem::path path_;
};

// Polls `condition` every 50 ms until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout);

class CoordinatorProcess {
 public:
  // Starts farm-coordinator on 127.0.0.1:0 (or `listen`, `http_listen`) and waits for its
  // ready file.
  static absl::StatusOr<CoordinatorProcess> Start(const std::string& data_dir,
                                                  const std::vector<std::string>& extra_args = {},
                                                  const std::string& listen = "127.0.0.1:0",
                                                  const std::string& http_listen = "127.0.0.1:0");
  const std::string& grpc_address() const { return grpc_; }
  const std::string& http_address() const { return http_; }
  const std::string& token_file() const { return token_file_; }
  const std::string& log_path() const { return log_; }
  Subprocess& process() { return *process_; }
  int port() const;
  // Kills the coordinator and reaps it: tests must not leave processes behind.
  void Stop();

 private:
  std::optional<Subprocess> process_;
  std::string grpc_, http_, token_file_, log_;
};

class WorkerProcess {
 public:
  static absl::StatusOr<WorkerProcess> Start(const std::string& coordinator,
                                             const std::string& token_file, const std::string& name,
                                             const std::string& dir,
                                             const std::vector<std::string>& extra_args = {});
  // A worker started by another command line (e.g. inside an emulated host).
  static absl::StatusOr<WorkerProcess> Spawn(const std::vector<std::string>& argv,
                                             const std::string& log_path);
  Subprocess& process() { return *process_; }
  const std::string& log_path() const { return log_; }
  // Kills the worker and reaps it.
  void Stop();

 private:
  std::optional<Subprocess> process_;
  std::string log_;
};

// Runs farmctl with `args` and the given extra environment, for at most `timeout` (a
// `submit --wait` of a real package takes minutes); never throws.
CommandResult RunFarmctl(const std::vector<std::string>& args,
                         const std::vector<std::string>& env = {},
                         absl::Duration timeout = absl::Seconds(120));

// `farmctl workers --json` against a coordinator; an empty array on any failure.
nlohmann::json ListWorkersJson(const std::string& coordinator, const std::string& token_file);

// The state ("online", "lost", ...) of `name` in `workers`, or "" if absent.
std::string StateOf(const nlohmann::json& workers, const std::string& name);

// Takes every virtualenv's bin directory off this process's PATH and unsets VIRTUAL_ENV and
// PYTHONPATH: workers this test starts then make a recipe's Python environment themselves,
// as on a stock host, instead of finding the test runner's.
void LeaveVirtualenvs();

std::string ReadFile(const std::string& path);
// Writes `text` to `path`, making its directory.
void WriteText(const std::string& path, const std::string& text);

// A finished command for a failure message: exit code, stdout and stderr.
std::string Output(const CommandResult& r);

// The regular files under `dir`, at any depth (0 when it is missing).
size_t FilesUnder(const std::filesystem::path& dir);

// How often `needle` occurs in `text` (overlaps counted).
int CountOccurrences(const std::string& text, const std::string& needle);

// The compile cache key farm-nvcc logged as "whole-compile key" (FARM_NVCC_LOG=debug) in
// its stderr, or "".
std::string LoggedCompileCacheKey(const std::string& stderr_text);

// The build id `farmctl submit` printed ("submitted build ID ..."), or "".
std::string SubmittedBuildId(const CommandResult& r);

// A TCP port on 127.0.0.1 that was free a moment ago, for servers that need one up front.
int FreePort();

}  // namespace farm::testing
