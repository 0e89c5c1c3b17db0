// farm-coordinator: flags in, Coordinator out; the work happens in coordinator.cc.
#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "coordinator/admin/backup_restore.h"
#include "coordinator/coordinator.h"
#include "coordinator/data_dir.h"
#include "coordinator/http/http_request_guard.h"
#include "coordinator/state_store.h"
#include "libfarm/auth/role.h"
#include "libfarm/files/json_file.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/termination_signal.h"
#include "libfarm/status/exit_code.h"
#include "libfarm/units/byte_size.h"

namespace {

std::string DefaultDataDir() {
  if (const std::string state = farm::GetEnv("XDG_STATE_HOME"); !state.empty()) {
    return absl::StrCat(state, "/wheelfarm/coordinator");
  }
  if (const std::string home = farm::GetEnv("HOME"); !home.empty()) {
    return absl::StrCat(home, "/.local/state/wheelfarm/coordinator");
  }
  return "/var/lib/wheelfarm";
}

// glibc gives threads that contend for malloc an arena of their own, up to eight per core, and
// each arena keeps its own free pages: after a burst of actions the gRPC threads' arenas held
// more than what was in use. Two arenas (each thread's cache still serves its small blocks)
// keep RSS near use (docs/benchmarks.md: Retention). An operator's own setting wins.
void LimitMallocArenas() {
  // MALLOC_ARENA_MAX set at all, even to nothing, is the operator's say, as it always was.
  if (std::getenv("MALLOC_ARENA_MAX") != nullptr ||
      absl::StrContains(farm::GetEnv("GLIBC_TUNABLES"), "glibc.malloc.arena_max")) {
    return;
  }
  mallopt(M_ARENA_MAX, 2);
}

// farm-coordinator --repair: never done implicitly, since salvaging may drop records.
int RepairState(const std::string& data_dir, spdlog::logger& log) {
  const std::string state = farm::coordinator::StateDir(data_dir);
  auto copy = farm::coordinator::StateStore::Repair(state);
  if (!copy.ok()) {
    log.error("{}", copy.status().message());
    return farm::ExitCodeForStatus(copy.status());
  }
  log.warn(
      "repaired {}. The state before the repair is in {}; RocksDB's account of what it kept "
      "and dropped is in {}/LOG. Start farm-coordinator as usual to serve it.",
      state, *copy, state);
  return farm::kExitOk;
}

// farm-coordinator --restore-from: into a data dir without state, then exit.
int RestoreState(const std::string& backup_dir, const std::string& data_dir, spdlog::logger& log) {
  auto manifest = farm::coordinator::RestoreBackup(backup_dir, data_dir);
  if (!manifest.ok()) {
    log.error("{}", manifest.status().message());
    return farm::ExitCodeForStatus(manifest.status());
  }
  log.info(
      "restored the backup of {} (Wheelfarm {}) from {} into {}: {} files, {} bytes, {} CAS "
      "blobs. Start farm-coordinator as usual to serve it.",
      manifest->created_at, manifest->version, backup_dir, data_dir, manifest->files,
      manifest->bytes, manifest->blobs);
  return farm::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  LimitMallocArenas();  // before any thread allocates
  farm::BlockTerminationSignals();
  farm::coordinator::CoordinatorOptions options;
  options.data_dir = DefaultDataDir();
  std::string worker_timeout = "30s";
  std::string action_retention = "168h";
  std::string retention_check_interval = "10m";
  std::string cas_quota = "20GiB";
  std::string max_action_input = "4GiB";
  std::string index_max_upload = "2GiB";
  std::string ready_file;
  std::string log_level = "info";

  CLI::App app{"farm-coordinator: Wheelfarm's scheduler, state store and API server"};
  app.add_option("--listen", options.listen, "gRPC address for workers and clients")
      ->capture_default_str();
  app.add_option("--http-listen", options.http_listen,
                 "HTTP address for /healthz, /metrics and the dashboard; '' disables HTTP")
      ->capture_default_str();
  app.add_option("--data-dir", options.data_dir, "where the farm's durable state lives")
      ->capture_default_str();
  app.add_option("--token-file", options.token_file,
                 "file holding the shared farm token (default: <data-dir>/token, created if "
                 "missing)");
  app.add_option("--worker-timeout", worker_timeout,
                 "a worker silent for this long is shown lost (e.g. 30s, 500ms)")
      ->capture_default_str();
  app.add_option("--action-retention", action_retention,
                 "finished action records are deleted after this long (e.g. 168h, 24h); their "
                 "results stay in the action cache")
      ->capture_default_str();
  app.add_option("--max-finished-actions", options.max_finished_actions,
                 "at most this many finished action records are kept, newest first")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--retention-check-interval", retention_check_interval,
                 "how often finished action records (and builds left without any) past the "
                 "retention are deleted: a scan of the stored records (e.g. 10m, 1h)")
      ->capture_default_str();
  const std::map<std::string, farm::coordinator::QueueOrder> queue_orders = {
      {"longest-first", farm::coordinator::QueueOrder::kLongestFirst},
      {"fifo", farm::coordinator::QueueOrder::kFifo}};
  app.add_option("--queue-order", options.queue_order,
                 "which queued action of a build runs next: longest-first (by the wall time "
                 "learnt from earlier runs of its translation unit and arch) or fifo")
      ->transform(CLI::CheckedTransformer(queue_orders, CLI::ignore_case))
      ->default_str("longest-first");
  app.add_option("--memory-aware", options.memory_aware,
                 "lease a worker an action only while the peak RAM learnt for what it runs "
                 "leaves room for the action's (true/false)")
      ->capture_default_str();
  std::string reapi_action_cache_writers;
  app.add_option("--reapi-action-cache-writers", reapi_action_cache_writers,
                 "roles besides admin whose tokens may write REAPI's action cache "
                 "(UpdateActionResult), comma-separated: submit, worker, build; empty: admins "
                 "only (docs/reapi.md: the write policy)");
  app.add_option("--cas-quota", cas_quota,
                 "most bytes the CAS keeps in <data-dir>/cas; least recently used unpinned "
                 "blobs are evicted beyond it (e.g. 512MiB, 20GiB)")
      ->capture_default_str();
  app.add_option("--max-action-input", max_action_input,
                 "most a client's action may name as input, each file counted at every path "
                 "it appears (an image action's trees included); larger ones are refused")
      ->capture_default_str();
  app.add_option("--recipes-dir", options.recipes_dir,
                 "folder of build recipes (*.toml); default: <data-dir>/recipes if it exists, "
                 "else the recipes/ folder of the source tree this binary was built from");
  app.add_option("--index-max-upload", index_max_upload,
                 "largest file the built-in package index accepts by upload (e.g. 500MiB, 4GiB)")
      ->capture_default_str();
  app.add_option("--http-allow-host", options.http_limits.allowed_hosts,
                 "a Host name a loopback --http-listen also answers to, besides 127.0.0.1, "
                 "localhost and [::1] (repeatable or comma-separated; others get 421)")
      ->delimiter(',');
  app.add_option("--http-max-connections", options.http_limits.max_connections,
                 "open HTTP connections served at once; more are answered 503")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--http-max-connections-per-client",
                 options.http_limits.max_connections_per_client,
                 "open HTTP connections one client address may hold; more are answered 503")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--grpc-max-calls", options.grpc_max_calls,
                 "gRPC calls served at once, long polls and streams included; more are "
                 "answered RESOURCE_EXHAUSTED at once")
      ->capture_default_str()
      ->check(CLI::Range(4, 1 << 20));
  app.add_option("--ready-file", ready_file,
                 "write {pid, grpc, http, token_file} as JSON here once serving");
  app.add_option("--tls-cert", options.tls.cert_file,
                 "PEM certificate (chain) for TLS on the gRPC and HTTP ports; with --tls-key");
  app.add_option("--tls-key", options.tls.key_file,
                 "PEM private key of --tls-cert; must not be readable by others (chmod 600)");
  app.add_option("--tls-client-ca", options.tls.client_ca_file,
                 "require gRPC clients (workers, farmctl, farm-nvcc) to present a certificate "
                 "signed by this CA (mutual TLS)");
  app.add_option("--device-cpu-archs", options.placement.portable_cpu_archs,
                 "run actions that name no CPU arch (farm-nvcc's device compiles) only on workers "
                 "of these CPU archs, e.g. aarch64 (comma-separated; default: any CPU)")
      ->delimiter(',')
      ->check(CLI::IsMember({"aarch64", "x86_64", "ppc64le", "s390x"}));
  app.add_option("--log-level", log_level, "debug, info, warn or error")->capture_default_str();
  bool repair = false;
  app.add_flag("--repair", repair,
               "salvage a damaged state store instead of serving: copies <data-dir>/state aside "
               "first, lets RocksDB keep what it can, and exits; then start as usual");
  std::string restore_from;
  app.add_option("--restore-from", restore_from,
                 "put a backup made by 'farmctl admin backup DIR' into --data-dir (which must "
                 "hold no farm state yet) and exit; then start as usual")
      ->excludes("--repair");
  CLI11_PARSE(app, argc, argv);

  auto log = farm::ComponentLogger("coordinator");
  if (!farm::SetLogLevel(log_level)) {
    log->error("unknown --log-level '{}': use debug, info, warn or error", log_level);
    return farm::kExitConfig;
  }
  if (!absl::ParseDuration(worker_timeout, &options.worker_timeout)) {
    log->error("invalid --worker-timeout '{}': use a duration such as 30s or 500ms",
               worker_timeout);
    return farm::kExitConfig;
  }

  if (!absl::ParseDuration(action_retention, &options.action_retention) ||
      options.action_retention <= absl::ZeroDuration()) {
    log->error("invalid --action-retention '{}': use a positive duration such as 168h or 24h",
               action_retention);
    return farm::kExitConfig;
  }
  if (!absl::ParseDuration(retention_check_interval, &options.retention_check_interval) ||
      options.retention_check_interval <= absl::ZeroDuration()) {
    log->error("invalid --retention-check-interval '{}': use a positive duration such as 10m or 1h",
               retention_check_interval);
    return farm::kExitConfig;
  }

  if (repair) return RepairState(options.data_dir, *log);
  if (!restore_from.empty()) return RestoreState(restore_from, options.data_dir, *log);

  for (absl::string_view name :
       absl::StrSplit(reapi_action_cache_writers, ',', absl::SkipWhitespace())) {
    std::optional<farm::Role> role = farm::RoleNamed(absl::StripAsciiWhitespace(name));
    // A read token writes nothing anywhere in the farm; admins write already.
    if (!role || *role == farm::Role::kRead || *role == farm::Role::kAdmin) {
      log->error(
          "--reapi-action-cache-writers: '{}' is not a role that may be granted. Fix: "
          "name submit, worker or build (admins write already)",
          name);
      return farm::kExitConfig;
    }
    options.reapi_action_cache_writers.push_back(*role);
  }
  auto quota = farm::ParseByteSize(cas_quota);
  if (!quota.ok()) {
    log->error("--cas-quota: {}", quota.status().message());
    return farm::kExitConfig;
  }
  options.cas_quota_bytes = *quota;
  auto max_input = farm::ParseByteSize(max_action_input);
  if (!max_input.ok()) {
    log->error("--max-action-input: {}", max_input.status().message());
    return farm::kExitConfig;
  }
  options.max_action_input_bytes = *max_input;
  auto max_upload = farm::ParseByteSize(index_max_upload);
  if (!max_upload.ok()) {
    log->error("--index-max-upload: {}", max_upload.status().message());
    return farm::kExitConfig;
  }
  options.index_max_upload_bytes = *max_upload;
  for (const std::string& name : options.http_limits.allowed_hosts) {
    if (!farm::coordinator::HostName(name)) {
      log->error(
          "--http-allow-host '{}' is not a host name. Fix: give a name such as "
          "farm.example or build-box.local",
          name);
      return farm::kExitConfig;
    }
  }

  auto coordinator = farm::coordinator::Coordinator::Start(options);
  if (!coordinator.ok()) {
    log->error("{}", coordinator.status().message());
    return farm::ExitCodeForStatus(coordinator.status());
  }
  if (!ready_file.empty()) {
    nlohmann::json ready = {
        {"pid", ::getpid()},
        {"grpc", (*coordinator)->grpc_address()},
        {"http", (*coordinator)->http_address()},
        {"tls", (*coordinator)->tls()},
        {"token_file", std::filesystem::absolute((*coordinator)->token_file()).string()}};
    if (auto s = farm::WriteJsonFileAtomically(ready_file, ready); !s.ok()) {
      log->error("{}", s.message());
      return farm::kExitConfig;
    }
  }
  int sig = farm::WaitForTerminationSignal();
  log->info("signal {} received, shutting down", sig);
  (*coordinator)->Shutdown();
  return farm::kExitOk;
}
