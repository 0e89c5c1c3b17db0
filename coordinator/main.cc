// farm-coordinator: flags in, Coordinator out; the work happens in coordinator.cc.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "coordinator/coordinator.h"
#include "libfarm/cas/byte_size.h"
#include "libfarm/files/json_file.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/termination_signal.h"
#include "libfarm/status/exit_code.h"

namespace {

std::string DefaultDataDir() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state != '\0') {
    return absl::StrCat(state, "/wheelfarm/coordinator");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return absl::StrCat(home, "/.local/state/wheelfarm/coordinator");
  }
  return "/var/lib/wheelfarm";
}

}  // namespace

int main(int argc, char** argv) {
  farm::BlockTerminationSignals();
  farm::coordinator::CoordinatorOptions options;
  options.data_dir = DefaultDataDir();
  std::string worker_timeout = "30s";
  std::string cas_quota = "20GiB";
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
  app.add_option("--cas-quota", cas_quota,
                 "most bytes the CAS keeps in <data-dir>/cas; least recently used unpinned "
                 "blobs are evicted beyond it (e.g. 512MiB, 20GiB)")
      ->capture_default_str();
  app.add_option("--recipes-dir", options.recipes_dir,
                 "folder of build recipes (*.toml); default: <data-dir>/recipes if it exists, "
                 "else the recipes/ folder of the source tree this binary was built from");
  app.add_option("--index-max-upload", index_max_upload,
                 "largest file the built-in package index accepts by upload (e.g. 500MiB, 4GiB)")
      ->capture_default_str();
  app.add_option("--ready-file", ready_file,
                 "write {pid, grpc, http, token_file} as JSON here once serving");
  app.add_option("--log-level", log_level, "debug, info, warn or error")->capture_default_str();
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

  auto quota = farm::ParseByteSize(cas_quota);
  if (!quota.ok()) {
    log->error("--cas-quota: {}", quota.status().message());
    return farm::kExitConfig;
  }
  options.cas_quota_bytes = *quota;
  auto max_upload = farm::ParseByteSize(index_max_upload);
  if (!max_upload.ok()) {
    log->error("--index-max-upload: {}", max_upload.status().message());
    return farm::kExitConfig;
  }
  options.index_max_upload_bytes = *max_upload;

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
