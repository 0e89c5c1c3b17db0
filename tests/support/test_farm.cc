#include "tests/support/test_farm.h"

#include <signal.h>

#include <algorithm>
#include <stdexcept>

#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libfarm/auth/token.h"
#include "libfarm/net/address.h"

namespace farm::testing {
namespace fs = std::filesystem;

namespace {

// `requested` (a listen address, "" for none) with the port `actual` got.
std::string SamePort(const std::string& requested, const std::string& actual) {
  if (requested.empty()) return "";
  auto want = ParseHostPort(requested);
  auto got = ParseHostPort(actual);
  if (!want.ok() || !got.ok()) return requested;
  want->port = got->port;
  return FormatHostPort(*want);
}

// The last `n` lines of `text`.
std::string LastLines(const std::string& text, size_t n) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<ptrdiff_t>(n));
  return absl::StrJoin(lines, "\n");
}

}  // namespace

std::vector<TestWorker> NumberedWorkers(int n, const TestWorker& like) {
  std::vector<TestWorker> workers;
  for (int i = 1; i <= n; ++i) {
    workers.push_back(like);
    workers.back().name = absl::StrCat("w", i);
  }
  return workers;
}

FarmOptions WheelFarmOptions(const fs::path& dir, const std::string& recipes_dir, int workers) {
  return FarmOptions{
      .coordinator_args = {"--recipes-dir", recipes_dir},
      .workers = NumberedWorkers(
          workers, {.args = {"--builds-dir", (dir / "builds").string()}, .slots = 2})};
}

absl::StatusOr<std::unique_ptr<TestFarm>> TestFarm::Start(const fs::path& dir,
                                                          FarmOptions options) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  // Whatever starts below is stopped by the farm's destructor when a later step fails.
  std::unique_ptr<TestFarm> farm(new TestFarm(dir, std::move(options)));
  if (absl::Status s = farm->StartCoordinator(farm->options_.listen, farm->options_.http_listen);
      !s.ok()) {
    return s;
  }
  std::vector<std::string> names;
  for (const TestWorker& worker : farm->options_.workers) {
    auto started = farm->StartWorker(worker);
    if (!started.ok()) return started.status();
    names.push_back(worker.name);
  }
  if (!names.empty()) {
    if (absl::Status s = farm->WaitUntilOnline(names, farm->options_.online_timeout); !s.ok()) {
      return s;
    }
  }
  return farm;
}

absl::StatusOr<std::unique_ptr<TestFarm>> TestFarm::Start(const fs::path& dir, int workers) {
  return Start(dir, FarmOptions{.workers = NumberedWorkers(workers)});
}

TestFarm::~TestFarm() {
  for (Worker& w : workers_) w.process.Stop();
  if (coordinator_) coordinator_->Stop();
}

std::string TestFarm::AdminToken() const {
  auto token = ReadTokenFile(admin_token_file());
  return token.ok() ? *token : "";
}

std::vector<std::string> TestFarm::ClientEnvironment() const {
  return {"FARM_COORDINATOR=" + address(), "FARM_TOKEN_FILE=" + admin_token_file()};
}

CommandResult TestFarm::Farmctl(const std::vector<std::string>& args,
                                const std::vector<std::string>& env, absl::Duration timeout,
                                const std::string& token_file) const {
  std::vector<std::string> argv = {"--coordinator", address(), "--token-file",
                                   token_file.empty() ? admin_token_file() : token_file};
  argv.insert(argv.end(), options_.farmctl_args.begin(), options_.farmctl_args.end());
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> all_env = {
      "XDG_STATE_HOME=" + (dir_ / "state").string(),
      "FARM_TOKEN_FILE=", "FARM_TLS_CA=", "FARM_TLS_CERT=", "FARM_TLS_KEY="};
  all_env.insert(all_env.end(), env.begin(), env.end());
  return RunFarmctl(argv, all_env, timeout);
}

absl::StatusOr<CreatedToken> TestFarm::CreateToken(const std::string& role,
                                                   const std::string& name) const {
  const std::string file = (dir_ / (name + ".token")).string();
  CommandResult r =
      Farmctl({"--json", "token", "create", "--role", role, "--name", name, "--out", file});
  if (r.exit_code != 0) {
    return absl::InternalError(absl::StrCat("farmctl token create --role ", role, " --name ", name,
                                            " failed: ", Output(r)));
  }
  const nlohmann::json made = nlohmann::json::parse(r.stdout_text, nullptr, false);
  const std::string id = made.is_object() ? made.value("id", "") : "";
  if (id.empty()) {
    return absl::InternalError(
        absl::StrCat("farmctl token create printed no token id: ", Output(r)));
  }
  return CreatedToken{.file = file, .id = id};
}

nlohmann::json TestFarm::ListWorkers() const {
  CommandResult r = Farmctl({"--json", "workers"});
  if (r.exit_code != 0) return nlohmann::json::array();
  auto listed = nlohmann::json::parse(r.stdout_text, nullptr, false);
  return listed.is_array() ? listed : nlohmann::json::array();
}

std::string TestFarm::WorkerState(const std::string& name) const {
  return StateOf(ListWorkers(), name);
}

std::string TestFarm::Metrics() const {
  auto hp = ParseHostPort(coordinator_->http_address());
  EXPECT_TRUE(hp.ok()) << coordinator_->http_address();
  if (!hp.ok()) return "";
  httplib::Client http(hp->host, hp->port);
  auto r = http.Get("/metrics");
  EXPECT_TRUE(r) << "GET /metrics of " << coordinator_->http_address();
  return r ? r->body : "";
}

absl::Status TestFarm::StartCoordinator(const std::string& listen, const std::string& http_listen) {
  auto started = CoordinatorProcess::Start((dir_ / options_.data_dir).string(),
                                           options_.coordinator_args, listen, http_listen);
  if (!started.ok()) {
    return absl::Status(started.status().code(), absl::StrCat("the test farm in ", dir_.string(),
                                                              ": ", started.status().message()));
  }
  coordinator_ = *std::move(started);
  return absl::OkStatus();
}

void TestFarm::StopCoordinator() { coordinator_->Stop(); }

absl::Status TestFarm::RestartCoordinator() {
  const std::string listen = SamePort(options_.listen, coordinator_->grpc_address());
  const std::string http_listen = SamePort(options_.http_listen, coordinator_->http_address());
  coordinator_->Stop();
  return StartCoordinator(listen, http_listen);
}

absl::StatusOr<WorkerProcess> TestFarm::Spawn(const TestWorker& worker) const {
  const std::string parent = worker.dir.empty() ? dir_.string() : worker.dir;
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::vector<std::string> args;
  if (worker.slots > 0) args = {"--slots", absl::StrCat(worker.slots)};
  args.insert(args.end(), worker.args.begin(), worker.args.end());
  auto started = WorkerProcess::Start(
      address(), worker.token_file.empty() ? admin_token_file() : worker.token_file, worker.name,
      parent, args);
  if (!started.ok()) {
    return absl::Status(
        started.status().code(),
        absl::StrCat("worker ", worker.name, " did not start: ", started.status().message()));
  }
  return started;
}

absl::StatusOr<WorkerProcess*> TestFarm::StartWorker(const TestWorker& worker) {
  auto started = Spawn(worker);
  if (!started.ok()) return started.status();
  workers_.push_back(Worker{.spec = worker, .process = *std::move(started)});
  return &workers_.back().process;
}

WorkerProcess* TestFarm::Adopt(const std::string& name, WorkerProcess process) {
  workers_.push_back(
      Worker{.spec = {.name = name}, .process = std::move(process), .adopted = true});
  return &workers_.back().process;
}

TestFarm::Worker* TestFarm::Find(const std::string& name) {
  for (auto it = workers_.rbegin(); it != workers_.rend(); ++it) {
    if (it->spec.name == name) return &*it;
  }
  return nullptr;
}

const TestFarm::Worker* TestFarm::Find(const std::string& name) const {
  for (auto it = workers_.rbegin(); it != workers_.rend(); ++it) {
    if (it->spec.name == name) return &*it;
  }
  return nullptr;
}

WorkerProcess& TestFarm::worker(const std::string& name) {
  Worker* w = Find(name);
  if (w == nullptr) throw std::out_of_range("the test farm has no worker named " + name);
  return w->process;
}

std::vector<std::string> TestFarm::WorkerNames() const {
  std::vector<std::string> names;
  for (const Worker& w : workers_) {
    if (std::find(names.begin(), names.end(), w.spec.name) == names.end()) {
      names.push_back(w.spec.name);
    }
  }
  return names;
}

std::string TestFarm::WorkerDir(const std::string& name) const {
  const Worker* w = Find(name);
  const std::string parent = w == nullptr || w->spec.dir.empty() ? dir_.string() : w->spec.dir;
  return parent + "/" + name;
}

void TestFarm::KillWorker(const std::string& name) { worker(name).Stop(); }

std::optional<int> TestFarm::StopWorker(const std::string& name, absl::Duration timeout) {
  Subprocess& process = worker(name).process();
  process.Signal(SIGTERM);
  return process.Wait(timeout);
}

absl::Status TestFarm::RestartWorker(const std::string& name) {
  Worker* w = Find(name);
  if (w == nullptr) return absl::NotFoundError("the test farm has no worker named " + name);
  if (w->adopted) {
    return absl::FailedPreconditionError(
        absl::StrCat("worker ", name, " was started outside the test farm: restart it there"));
  }
  w->process.Stop();
  auto started = Spawn(w->spec);
  if (!started.ok()) return started.status();
  w->process = *std::move(started);
  return absl::OkStatus();
}

absl::Status TestFarm::WaitUntilOnline(const std::vector<std::string>& names,
                                       absl::Duration timeout) {
  nlohmann::json listed;
  std::string exited;
  const bool online = WaitFor(
      [&] {
        for (const std::string& name : names) {
          Worker* w = Find(name);
          if (w == nullptr) continue;
          if (std::optional<int> code = w->process.process().Wait(absl::ZeroDuration())) {
            exited = absl::StrCat(name, " exited with ", *code);
            return true;
          }
        }
        listed = ListWorkers();
        for (const std::string& name : names) {
          if (StateOf(listed, name) != "online") return false;
        }
        return true;
      },
      timeout);
  if (online && exited.empty()) return absl::OkStatus();
  const std::string why = WhyNotOnline(names, listed, exited);
  if (!exited.empty()) return absl::FailedPreconditionError(why);
  return absl::DeadlineExceededError(
      absl::StrCat("after ", absl::FormatDuration(timeout), ": ", why));
}

std::string TestFarm::WhyNotOnline(const std::vector<std::string>& names,
                                   const nlohmann::json& listed, const std::string& exited) {
  std::vector<std::string> not_online;
  for (const std::string& name : names) {
    const std::string state = StateOf(listed, name);
    if (state == "online") continue;
    not_online.push_back(state.empty() ? absl::StrCat(name, " (not listed)")
                                       : absl::StrCat(name, " (", state, ")"));
  }
  std::string why = absl::StrCat("the test farm in ", dir_.string(),
                                 ": workers not online: ", absl::StrJoin(not_online, ", "));
  if (!exited.empty()) absl::StrAppend(&why, "; ", exited);
  for (const std::string& name : names) {
    if (StateOf(listed, name) == "online") continue;
    const Worker* w = Find(name);
    if (w == nullptr) continue;
    absl::StrAppend(&why, "\n--- ", name, "'s log, ", w->process.log_path(), " ---\n",
                    ReadFile(w->process.log_path()));
  }
  absl::StrAppend(&why, "\n--- the coordinator's log, ", coordinator_->log_path(),
                  " (its last 40 lines) ---\n", LastLines(ReadFile(coordinator_->log_path()), 40));
  return why;
}

}  // namespace farm::testing
