#include "cli/local_farm.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/auth/token.h"
#include "libfarm/client/farm_client.h"
#include "libfarm/files/json_file.h"
#include "libfarm/host/host_probe.h"
#include "libfarm/logging/logger.h"
#include "libfarm/net/address.h"
#include "libfarm/net/listen_probe.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/tls/local_ca.h"

namespace farm::cli {
namespace {

namespace fs = std::filesystem;

// farm-coordinator and farm-worker are installed beside farmctl; PATH is the fallback.
std::string FindFarmBinary(const std::string& name) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path beside = self.parent_path() / name;
    if (fs::is_regular_file(beside, ec)) return beside.string();
  }
  return name;
}

std::string LogTail(const std::string& path, size_t lines = 15) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    absl::StrAppend(&out, "\n    ", all[i]);
  }
  return out;
}

absl::Status Died(const std::string& what, int code, const std::string& log) {
  return absl::FailedPreconditionError(absl::StrCat(
      what, " exited with code ", code, " during start-up; its log ", log, " ends:", LogTail(log)));
}

struct Launched {
  LocalFarmProcess process;
  Subprocess child;
};

absl::StatusOr<Launched> Launch(const std::string& role, const std::string& name,
                                const std::vector<std::string>& argv, const std::string& log) {
  auto child = Subprocess::Spawn(argv, {.log_path = log, .new_session = true});
  if (!child.ok()) return child.status();
  auto start = ProcessStartTime(child->pid());
  if (!start.ok()) {
    auto code = child->Wait(absl::Seconds(1));
    return Died(name, code.value_or(-1), log);
  }
  return Launched{{role, name, child->pid(), *start}, *child};
}

// D/tls: the farm's CA (kept across restarts, so clients that copied ca.pem keep working)
// and fresh certificates: the coordinator's names loopback and the --listen host.
absl::StatusOr<LocalCa> MakeLocalFarmCa(const LocalFarmOptions& o, const std::string& dir,
                                        const std::vector<std::string>& worker_names) {
  LocalCaOptions ca_options{.dir = (fs::path(dir) / "tls").string()};
  if (auto hp = ParseHostPort(o.listen); hp.ok()) ca_options.server_names.push_back(hp->host);
  ca_options.client_names = worker_names;
  ca_options.client_names.push_back("farmctl");
  auto ca = EnsureLocalCa(ca_options);
  if (!ca.ok()) {
    return absl::Status(ca.status().code(),
                        absl::StrCat("farmctl up --tls: ", ca.status().message()));
  }
  return ca;
}

// `address` when it was given or can be listened on; else the same host with port 0 (any free
// port, which the coordinator's ready file then names), and a note saying why.
std::string DefaultOrFreeAddress(const std::string& address, bool given, const char* flag,
                                 std::vector<std::string>& notes) {
  auto hp = ParseHostPort(address);
  if (given || !hp.ok() || hp->port == 0 || CanListenOn(*hp)) return address;
  notes.push_back(absl::StrCat(address,
                               " is in use (another local farm?), so this farm takes a "
                               "free port; ",
                               flag, " chooses one"));
  return FormatHostPort({hp->host, 0});
}

}  // namespace

absl::StatusOr<StartedFarm> StartLocalFarm(const LocalFarmOptions& o) {
  auto log = ComponentLogger("farmctl");
  if (o.workers < 0 || o.workers > 64) {
    return absl::InvalidArgumentError("--workers must be between 0 and 64");
  }
  const fs::path dir = o.data_dir;
  if (auto existing = ReadLocalFarmRecord(dir.string()); existing.ok()) {
    if (CoordinatorIsRunning(*existing)) {
      auto current = ClaimCurrentLocalFarm(dir.string());
      if (!current.ok()) return current.status();
      return StartedFarm{*existing, true, *current};
    }
    // A farm recorded here is no longer running: stop whatever of it is left.
    if (auto stopped = StopLocalFarm(dir.string()); !stopped.ok()) return stopped.status();
  }
  std::error_code ec;
  for (const char* sub : {"logs", "run", "workers"}) fs::create_directories(dir / sub, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot create ", dir.string(), ": ", ec.message(), ". Fix: choose another --data-dir"));
  }

  LocalFarmRecord record;
  record.data_dir = dir.string();
  std::vector<std::string> worker_names;
  for (int i = 1; i <= o.workers; ++i) worker_names.push_back(absl::StrCat("local-", i));
  std::optional<LocalCa> ca;
  if (o.tls) {
    auto made = MakeLocalFarmCa(o, dir.string(), worker_names);
    if (!made.ok()) return made.status();
    ca = *std::move(made);
    record.tls = {ca->ca_file, ca->clients.at("farmctl").cert_file,
                  ca->clients.at("farmctl").key_file};
  }
  std::vector<std::string> notes;
  const std::string listen = DefaultOrFreeAddress(o.listen, o.listen_given, "--listen", notes);
  const std::string http_listen =
      o.http_listen.empty()
          ? o.http_listen
          : DefaultOrFreeAddress(o.http_listen, o.http_listen_given, "--http-listen", notes);
  const std::string ready_file = (dir / "run" / "coordinator.ready").string();
  fs::remove(ready_file, ec);
  const std::string coordinator_log = (dir / "logs" / "coordinator.log").string();
  std::vector<std::string> coordinator_argv = {FindFarmBinary("farm-coordinator"),
                                               "--data-dir",
                                               (dir / "coordinator").string(),
                                               "--listen",
                                               listen,
                                               "--http-listen",
                                               http_listen,
                                               "--worker-timeout",
                                               o.worker_timeout,
                                               "--ready-file",
                                               ready_file};
  if (ca) {
    coordinator_argv.insert(coordinator_argv.end(),
                            {"--tls-cert", ca->server.cert_file, "--tls-key", ca->server.key_file,
                             "--tls-client-ca", ca->ca_file});
  }
  auto launched = Launch("coordinator", "farm-coordinator", coordinator_argv, coordinator_log);
  if (!launched.ok()) return launched.status();
  Subprocess coordinator = launched->child;
  record.processes.push_back(launched->process);
  // Recorded before anything else can fail, so `farmctl down` can always clean up.
  if (absl::Status s = WriteLocalFarmRecord(record); !s.ok()) return s;

  const absl::Time deadline = absl::Now() + o.ready_timeout;
  absl::StatusOr<nlohmann::json> ready = absl::NotFoundError("not ready");
  while (true) {
    if (auto code = coordinator.Wait(absl::ZeroDuration())) {
      return Died("farm-coordinator", *code, coordinator_log);
    }
    ready = ReadJsonFile(ready_file);
    if (ready.ok()) break;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("farm-coordinator did not become ready; see ",
                                                      coordinator_log, LogTail(coordinator_log)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  record.grpc_address = ready->value("grpc", "");
  record.http_address = ready->value("http", "");
  record.token_file = ready->value("token_file", "");
  if (absl::Status s = WriteLocalFarmRecord(record); !s.ok()) return s;
  auto current = ClaimCurrentLocalFarm(dir.string());
  if (!current.ok()) return current.status();

  const HostInfo host = ProbeHost();
  const uint32_t slots =
      o.slots_per_worker > 0
          ? o.slots_per_worker
          : std::max<uint32_t>(1, DefaultSlots(host.cores, host.ram_bytes) /
                                      static_cast<uint32_t>(std::max(1, o.workers)));
  std::vector<Subprocess> workers;
  std::vector<std::string> names;
  for (const std::string& name : worker_names) {
    const std::string worker_log = (dir / "logs" / absl::StrCat("worker-", name, ".log")).string();
    std::vector<std::string> worker_argv = {FindFarmBinary("farm-worker"),
                                            "--coordinator",
                                            record.grpc_address,
                                            "--token-file",
                                            record.token_file,
                                            "--name",
                                            name,
                                            "--work-dir",
                                            (dir / "workers" / name).string(),
                                            "--slots",
                                            absl::StrCat(slots)};
    if (ca) {
      worker_argv.insert(worker_argv.end(),
                         {"--tls-ca", ca->ca_file, "--tls-cert", ca->clients.at(name).cert_file,
                          "--tls-key", ca->clients.at(name).key_file});
    }
    auto proc = Launch("worker", name, worker_argv, worker_log);
    if (!proc.ok()) return proc.status();
    record.processes.push_back(proc->process);
    workers.push_back(proc->child);
    names.push_back(name);
    if (absl::Status s = WriteLocalFarmRecord(record); !s.ok()) return s;
  }

  auto token = ReadTokenFile(record.token_file);
  if (!token.ok()) return token.status();
  auto channel = LoadChannelOptions(record.tls);
  if (!channel.ok()) return channel.status();
  auto client = FarmClient::Connect(record.grpc_address, *token, *channel);
  while (true) {
    for (size_t i = 0; i < workers.size(); ++i) {
      if (auto code = workers[i].Wait(absl::ZeroDuration())) {
        return Died(absl::StrCat("farm-worker ", names[i]), *code,
                    (dir / "logs" / absl::StrCat("worker-", names[i], ".log")).string());
      }
    }
    auto listed = client->ListWorkers();
    size_t online = 0;
    if (listed.ok()) {
      for (const auto& w : listed->workers()) {
        if (std::find(names.begin(), names.end(), w.name()) != names.end() &&
            w.state() == farm::v1::WORKER_STATE_ONLINE) {
          ++online;
        }
      }
    }
    if (online == names.size()) break;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(online, " of ", names.size(),
                       " workers came online in time; see the logs in ", (dir / "logs").string()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return StartedFarm{record, false, *current, std::move(notes)};
}

absl::StatusOr<int> StopLocalFarm(const std::string& data_dir) {
  auto record = ReadLocalFarmRecord(data_dir);
  if (!record.ok()) {
    return absl::NotFoundError(absl::StrCat("no local farm recorded in ", data_dir));
  }
  // Workers first, so they leave cleanly while the coordinator still listens.
  std::vector<LocalFarmProcess> order;
  for (const auto& p : record->processes) {
    if (p.role != "coordinator") order.push_back(p);
  }
  for (const auto& p : record->processes) {
    if (p.role == "coordinator") order.push_back(p);
  }
  int stopped = 0;
  for (const auto& p : order) {
    if (!IsRunning(p)) continue;
    kill(p.pid, SIGTERM);
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    while (IsRunning(p) && absl::Now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (IsRunning(p)) {
      ComponentLogger("farmctl")->warn("{} (pid {}) ignored SIGTERM for 15s; killing it", p.name,
                                       p.pid);
      kill(p.pid, SIGKILL);
    }
    ++stopped;
  }
  std::error_code ec;
  fs::remove(LocalFarmRecordPath(data_dir), ec);
  ReleaseCurrentLocalFarm(data_dir);
  return stopped;
}

}  // namespace farm::cli
