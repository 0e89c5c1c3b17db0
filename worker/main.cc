// farm-worker: detect capabilities, then run the WorkerDaemon until SIGTERM.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "libfarm/auth/token.h"
#include "libfarm/cas/byte_size.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/host/host_probe.h"
#include "libfarm/logging/logger.h"
#include "libfarm/net/address.h"
#include "libfarm/process/termination_signal.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/request_limits.h"
#include "libfarm/status/exit_code.h"
#include "libfarm/tls/client_tls.h"
#include "worker/action_runner.h"
#include "worker/blob_cache.h"
#include "worker/capabilities.h"
#include "worker/sandbox.h"
#include "worker/wheel_build_runner.h"
#include "worker/work_dir_claim.h"
#include "worker/worker_daemon.h"

namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::string DefaultWorkDir(const std::string& name) {
  const std::string cache = EnvOr("XDG_CACHE_HOME", absl::StrCat(EnvOr("HOME", "/tmp"), "/.cache"));
  return absl::StrCat(cache, "/wheelfarm/worker-", name);
}

// A binary installed beside this one (bin/farm-nvcc next to bin/farm-worker).
std::string SiblingBinary(const std::string& name) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? name : (self.parent_path() / name).string();
}

// What actions never see, even where it lies under a directory they do: this worker's token
// file (and where a symlink to it leads), its work dir (blob cache, other actions' scratch
// dirs) and the packaged config directory (deploy/config, installed in /etc/wheelfarm).
std::vector<std::string> HiddenFromActions(const std::string& token_file,
                                           const std::string& work_dir) {
  std::vector<std::string> hidden = {"/etc/wheelfarm"};
  for (const std::string& path : {token_file, work_dir}) {
    std::error_code ec;
    hidden.push_back(std::filesystem::absolute(path, ec).string());
    const auto real = std::filesystem::canonical(path, ec);
    if (!ec) hidden.push_back(real.string());
  }
  return hidden;
}

}  // namespace

int main(int argc, char** argv) {
  farm::BlockTerminationSignals();
  std::string coordinator = EnvOr("FARM_COORDINATOR", "127.0.0.1:7420");
  std::string token_file = EnvOr("FARM_TOKEN_FILE", "");
  std::string name = farm::ProbeHost().hostname;
  std::string work_dir;
  std::string labels_text;
  std::string log_level = "info";
  std::string cache_size = "10GiB";
  farm::worker::WheelBuildOptions build_options;
  build_options.farm_nvcc = SiblingBinary("farm-nvcc");
  farm::worker::CapabilityOptions caps_options;
  bool no_sandbox = false;
  farm::ClientTlsFiles tls_files = farm::ClientTlsFilesFromEnvironment();

  CLI::App app{"farm-worker: a Wheelfarm build host; dials out to the coordinator"};
  app.add_option("--coordinator", coordinator, "coordinator gRPC address (env FARM_COORDINATOR)")
      ->capture_default_str();
  app.add_option("--token-file", token_file, "file holding the farm token (env FARM_TOKEN_FILE)");
  app.add_option("--tls-ca", tls_files.ca_file,
                 "CA of the coordinator's certificate: dial with TLS (env FARM_TLS_CA)");
  app.add_option("--tls-cert", tls_files.cert_file,
                 "this worker's client certificate, for a coordinator with --tls-client-ca "
                 "(env FARM_TLS_CERT)");
  app.add_option("--tls-key", tls_files.key_file,
                 "the key of --tls-cert, chmod 600 (env FARM_TLS_KEY)");
  app.add_option("--name", name, "worker name, unique in the farm")->capture_default_str();
  app.add_option("--work-dir", work_dir,
                 "scratch space for actions (default ~/.cache/wheelfarm/worker-NAME)");
  app.add_option(
      "--slots", caps_options.slots,
      "concurrent CUDA compile jobs (default: one per ~4 GiB RAM, at most one per core)");
  app.add_option("--labels", labels_text, "k=v,... advertised to the scheduler");
  app.add_option("--cuda-path", caps_options.cuda_paths,
                 "CUDA toolkit root(s) to offer (default: discover; 'none': offer none)");
  app.add_option("--cache-size", cache_size, "bound of the local blob cache (e.g. 10GiB)")
      ->capture_default_str();
  app.add_option("--builds-dir", build_options.builds_root,
                 "where wheel builds run; the same path on every host keeps the action cache "
                 "warm across hosts")
      ->capture_default_str();
  app.add_option("--farm-nvcc", build_options.farm_nvcc,
                 "farm-nvcc, the CUDA compiler launcher of wheel builds")
      ->capture_default_str();
  app.add_flag("--no-sandbox", no_sandbox,
               "run actions without the bubblewrap sandbox, with this worker's own rights "
               "(they can read its token and write wherever it can); only for hosts where bwrap "
               "cannot run");
  app.add_option("--log-level", log_level, "debug, info, warn or error")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto log = farm::ComponentLogger("worker");
  if (!farm::SetLogLevel(log_level)) {
    log->error("unknown --log-level '{}': use debug, info, warn or error", log_level);
    return farm::kExitConfig;
  }
  if (auto hp = farm::ParseHostPort(coordinator); !hp.ok()) {
    log->error("--coordinator: {}", hp.status().message());
    return farm::kExitConfig;
  }
  if (token_file.empty()) {
    log->error(
        "no farm token: pass --token-file (or set FARM_TOKEN_FILE) to the coordinator's "
        "token file");
    return farm::kExitConfig;
  }
  auto token = farm::ReadTokenFile(token_file);
  if (!token.ok()) {
    log->error("{}", token.status().message());
    return farm::kExitConfig;
  }
  auto channel_options = farm::LoadChannelOptions(tls_files);
  if (!channel_options.ok()) {
    log->error("{}", channel_options.status().message());
    return farm::kExitConfig;
  }
  auto cache_bytes = farm::ParseByteSize(cache_size);
  if (!cache_bytes.ok()) {
    log->error("--cache-size: {}", cache_bytes.status().message());
    return farm::kExitConfig;
  }
  auto labels = farm::worker::ParseLabels(labels_text);
  if (!labels.ok()) {
    log->error("{}", labels.status().message());
    return farm::kExitConfig;
  }
  caps_options.labels = *labels;
  caps_options.work_dir = work_dir.empty() ? DefaultWorkDir(name) : work_dir;
  std::error_code ec;
  std::filesystem::create_directories(caps_options.work_dir, ec);
  if (ec || ::access(caps_options.work_dir.c_str(), W_OK) != 0) {
    log->error("cannot use work dir {}: {}. Fix: pass --work-dir with a writable directory",
               caps_options.work_dir, ec ? ec.message() : std::strerror(errno));
    return farm::kExitConfig;
  }
  auto claim = farm::worker::ClaimWorkDir(caps_options.work_dir);
  if (!claim.ok()) {
    log->error("{}", claim.status().message());
    return farm::ExitCodeForStatus(claim.status());
  }
  // Checked before anything else is set up: a host that cannot sandbox gets no work.
  std::optional<farm::worker::Sandbox> sandbox;
  if (no_sandbox) {
    log->warn("--no-sandbox: actions run with this worker's own rights and can read its token");
  } else {
    sandbox.emplace(farm::worker::SandboxOptions{
        .hidden = HiddenFromActions(token_file, caps_options.work_dir)});
    if (absl::Status s = sandbox->Probe(); !s.ok()) {
      log->error("{}", s.message());
      return farm::kExitConfig;
    }
  }
  auto caps = farm::worker::DetectCapabilities(caps_options);
  if (!caps.ok()) {
    log->error("{}", caps.status().message());
    return farm::ExitCodeForStatus(caps.status());
  }
  if (absl::Status s = farm::CheckWorkerLabels(*caps); !s.ok()) {
    log->error("{}", s.message());
    return farm::kExitConfig;
  }
  caps->set_sandboxed(sandbox.has_value());
  std::vector<std::string> toolkits;
  for (const auto& t : caps->cuda()) {
    toolkits.push_back(absl::StrCat("CUDA ", t.version(), " (", t.release(), ", ", t.sms_size(),
                                    " SMs) at ", t.path()));
  }
  log->info("farm-worker {} '{}': {} {}, glibc {}, {} cores, {} GiB RAM, {} slots, {}, {}",
            FARM_VERSION, name, caps->os(), caps->cpu_arch(), caps->glibc(), caps->cores(),
            caps->ram_bytes() >> 30, caps->slots(),
            toolkits.empty() ? "no CUDA toolkit" : absl::StrJoin(toolkits, "; "),
            sandbox.has_value() ? absl::StrCat("actions sandboxed by ", sandbox->bwrap())
                                : "actions NOT sandboxed");

  absl::Notification stop;
  std::thread signal_waiter([&stop, log] {
    int sig = farm::WaitForTerminationSignal();
    log->info("signal {} received", sig);
    stop.Notify();
  });
  signal_waiter.detach();

  auto cas = farm::CasClient::Connect(coordinator, *token, {}, *channel_options);
  farm::worker::BlobCache cache(caps_options.work_dir + "/cache", *cache_bytes, cas.get());
  std::map<std::string, std::string> cuda_roots;
  for (const auto& t : caps->cuda()) {
    cuda_roots.emplace(t.version(), t.path());
    // Device compiles name the exact release ("13.0.88"; nvcc says "V13.0.88").
    cuda_roots.emplace(std::string(absl::StripPrefix(t.release(), "V")), t.path());
  }
  farm::worker::ActionRunner runner(caps_options.work_dir + "/scratch", &cache, cas.get(),
                                    std::move(cuda_roots),
                                    sandbox.has_value() ? &*sandbox : nullptr);
  if (absl::Status s = runner.ClearScratchRoot(); !s.ok()) {
    log->error("{}", s.message());
    return farm::kExitConfig;
  }
  build_options.coordinator = coordinator;
  build_options.token_file = std::filesystem::absolute(token_file).string();
  build_options.tls = tls_files;
  build_options.cores = caps->cores();
  build_options.ram_bytes = caps->ram_bytes();
  for (const auto& t : caps->cuda()) build_options.cuda_roots.emplace(t.version(), t.path());
  for (const auto& p : caps->python()) build_options.pythons.emplace(p.version(), p);
  auto channel = farm::DialCoordinator(coordinator, *channel_options);
  auto build_stub = farm::v1::BuildService::NewStub(channel);
  farm::worker::WheelBuildRunner wheel_builds(build_options, &runner, cas.get(), build_stub.get(),
                                              *token);
  farm::worker::LeaseDispatcher dispatcher(&runner, &wheel_builds);
  farm::worker::WorkerDaemon daemon(farm::v1::WorkerService::NewStub(channel),
                                    {.name = name,
                                     .token = *token,
                                     .coordinator = coordinator,
                                     .instance_id = claim->instance_id},
                                    *caps, &dispatcher);
  absl::Status result = daemon.Run(stop);
  if (!result.ok()) {
    log->error("{}", result.message());
    return farm::ExitCodeForStatus(result);
  }
  return farm::kExitOk;
}
