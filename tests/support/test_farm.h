// The one farm fixture of the integration tests: a coordinator and N workers started from the
// built binaries, waited for until every worker is online, with the admin token, new tokens,
// restarts of the coordinator and of single workers, and a teardown that stops every process
// it started. Every suite that starts a farm starts it here; CoordinatorProcess and
// WorkerProcess (farm_processes.h) are its building blocks, left to tests that drive one
// process by hand (a coordinator refusing its flags, a worker inside an emulated host).
//
// Layout under the farm's directory DIR:
//   DIR/data/              the coordinator's data dir (FarmOptions::data_dir), its log
//   DIR/data.log           beside it, and its ready file DIR/data.ready;
//   DIR/NAME/, NAME.log    each worker's work dir and log (TestWorker::dir instead of DIR);
//   DIR/NAME.token         a token made by CreateToken(role, NAME);
//   DIR/state/             XDG_STATE_HOME of the farmctl the fixture runs (no local farm).
#pragma once

#include <filesystem>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/support/farm_processes.h"

namespace farm::testing {

// One worker of a TestFarm.
struct TestWorker {
  std::string name;
  // Its flags besides --coordinator, --token-file, --name, --work-dir and --slots.
  std::vector<std::string> args;
  // --slots N; 0: no --slots flag (the worker's default).
  int slots = 1;
  // "": the farm's admin token.
  std::string token_file;
  // The directory that holds its work dir (DIR/NAME) and its log (DIR/NAME.log); "": the
  // farm's directory.
  std::string dir;
};

// Workers w1 ... wN, each as `like` but for its name.
std::vector<TestWorker> NumberedWorkers(int n, const TestWorker& like = {});

struct FarmOptions {
  // The coordinator's flags besides --data-dir, --listen, --http-listen and --ready-file.
  std::vector<std::string> coordinator_args;
  std::string listen = "127.0.0.1:0";
  // "": no HTTP server.
  std::string http_listen = "127.0.0.1:0";
  // The coordinator's data dir, under the farm's directory.
  std::string data_dir = "data";
  // Flags every farmctl call of the fixture adds (TLS: --tls-ca, --tls-cert, --tls-key).
  std::vector<std::string> farmctl_args;
  // Started after the coordinator, all waited for until online.
  std::vector<TestWorker> workers;
  // How long the workers get to come online.
  absl::Duration online_timeout = absl::Seconds(30);
};

// A farm that builds wheels: the coordinator serves the recipes in `recipes_dir`; workers
// w1 ... wN have 2 slots each and keep their builds (and build environments) under
// DIR/builds, where DIR is `dir`.
FarmOptions WheelFarmOptions(const std::filesystem::path& dir, const std::string& recipes_dir,
                             int workers = 2);

// A token made by TestFarm::CreateToken.
struct CreatedToken {
  std::string file;  // where the token is, DIR/NAME.token
  std::string id;    // what `farmctl token list` shows and `farmctl token revoke` takes
};

class TestFarm {
 public:
  // Starts the coordinator in `dir` (made if missing), then the workers, and waits until
  // every worker is online. A failure names what did not start, with its log; whatever did
  // start is stopped again.
  static absl::StatusOr<std::unique_ptr<TestFarm>> Start(const std::filesystem::path& dir,
                                                         FarmOptions options);
  // The farm most compile tests run on: workers w1 ... wN with one slot each.
  static absl::StatusOr<std::unique_ptr<TestFarm>> Start(const std::filesystem::path& dir,
                                                         int workers = 2);
  TestFarm(const TestFarm&) = delete;
  TestFarm& operator=(const TestFarm&) = delete;
  // Stops (kill -9, reaped) every worker it started or adopted, then the coordinator.
  ~TestFarm();

  const std::filesystem::path& dir() const { return dir_; }
  CoordinatorProcess& coordinator() { return *coordinator_; }
  const CoordinatorProcess& coordinator() const { return *coordinator_; }
  // The coordinator's gRPC address.
  const std::string& address() const { return coordinator_->grpc_address(); }
  const std::string& admin_token_file() const { return coordinator_->token_file(); }
  // The admin token's text.
  std::string AdminToken() const;
  // FARM_COORDINATOR and FARM_TOKEN_FILE for a farm-nvcc, farm-cc or farmctl talking to this
  // farm.
  std::vector<std::string> ClientEnvironment() const;

  // farmctl --coordinator ADDRESS --token-file TOKEN_FILE (the admin token's when "")
  // FarmOptions::farmctl_args ARGS..., with no local farm, FARM_TLS_* or FARM_TOKEN_FILE from
  // the test's environment; `env` entries ("K=V") go on top.
  CommandResult Farmctl(const std::vector<std::string>& args,
                        const std::vector<std::string>& env = {},
                        absl::Duration timeout = absl::Seconds(120),
                        const std::string& token_file = "") const;
  // A new token of `role` for `name` (`farmctl token create`), written to DIR/NAME.token.
  absl::StatusOr<CreatedToken> CreateToken(const std::string& role, const std::string& name) const;

  // `farmctl workers --json`; an empty array on any failure.
  nlohmann::json ListWorkers() const;
  // The state ("online", "lost", "offline", ...) of worker `name`, "" when not listed.
  std::string WorkerState(const std::string& name) const;
  // The coordinator's /metrics page; "" (and a test failure) when it cannot be read.
  std::string Metrics() const;

  // Kills the coordinator (kill -9) and reaps it; the workers keep running.
  void StopCoordinator();
  // Stops the coordinator if it still runs, then starts it again on the same data dir, with
  // the same flags, on the same gRPC and HTTP ports (clients and workers that hold its
  // addresses reach it again). Does not wait for the workers.
  absl::Status RestartCoordinator();

  // Starts a worker and returns it without waiting for it (it may be meant to fail). It is
  // from now on the worker of its name: worker(name) and the calls below that take a name.
  absl::StatusOr<WorkerProcess*> StartWorker(const TestWorker& worker);
  // A worker started by other means (e.g. inside an emulated host), waited for and stopped
  // like the farm's own; it cannot be restarted by the farm.
  WorkerProcess* Adopt(const std::string& name, WorkerProcess process);
  // Waits until each of `names` is online. The error names the workers that are not, with
  // what the coordinator lists for them, their logs (a worker that exited ends the wait at
  // once, with its exit code) and the end of the coordinator's log.
  absl::Status WaitUntilOnline(const std::vector<std::string>& names,
                               absl::Duration timeout = absl::Seconds(30));
  // The worker of that name started last; std::out_of_range (a failed test) for a name the
  // farm never started.
  WorkerProcess& worker(const std::string& name);
  // The names of the workers it started or adopted, each once, in the order they came.
  std::vector<std::string> WorkerNames() const;
  // Its work dir.
  std::string WorkerDir(const std::string& name) const;
  // Kills the worker (kill -9) and reaps it.
  void KillWorker(const std::string& name);
  // SIGTERM, then up to `timeout` for it to exit: its exit code, nullopt if it runs on.
  std::optional<int> StopWorker(const std::string& name,
                                absl::Duration timeout = absl::Seconds(10));
  // Kills the worker if it still runs and starts it again as it was started (same work dir,
  // token and flags), without waiting for it.
  absl::Status RestartWorker(const std::string& name);

 private:
  struct Worker {
    TestWorker spec;
    WorkerProcess process;
    bool adopted = false;
  };

  TestFarm(std::filesystem::path dir, FarmOptions options)
      : dir_(std::move(dir)), options_(std::move(options)) {}
  absl::Status StartCoordinator(const std::string& listen, const std::string& http_listen);
  absl::StatusOr<WorkerProcess> Spawn(const TestWorker& worker) const;
  Worker* Find(const std::string& name);
  const Worker* Find(const std::string& name) const;
  std::string WhyNotOnline(const std::vector<std::string>& names, const nlohmann::json& listed,
                           const std::string& exited);

  std::filesystem::path dir_;
  FarmOptions options_;
  std::optional<CoordinatorProcess> coordinator_;
  std::list<Worker> workers_;  // a list: references to its processes stay valid
};

}  // namespace farm::testing
