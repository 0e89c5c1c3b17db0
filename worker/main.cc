// farm-worker: parse flags, start the Worker (worker/worker.h), run it until SIGTERM.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <tuple>

#include <CLI/CLI.hpp>

#include "absl/synchronization/notification.h"
#include "libfarm/gpu/gpu_device.h"
#include "libfarm/host/host_probe.h"
#include "libfarm/logging/logger.h"
#include "libfarm/net/address.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/termination_signal.h"
#include "libfarm/status/exit_code.h"
#include "libfarm/units/byte_size.h"
#include "worker/worker.h"

namespace {

// A binary installed beside this one (bin/farm-nvcc next to bin/farm-worker).
std::string SiblingBinary(const std::string& name) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? name : (self.parent_path() / name).string();
}

}  // namespace

int main(int argc, char** argv) {
  farm::BlockTerminationSignals();
  farm::worker::WorkerOptions options;
  options.coordinator = farm::GetEnvOr("FARM_COORDINATOR", options.coordinator);
  options.token_file = farm::GetEnv("FARM_TOKEN_FILE");
  options.name = farm::ProbeHost().hostname;
  options.tls = farm::ClientTlsFilesFromEnvironment();
  options.wheel_builds.farm_nvcc = SiblingBinary("farm-nvcc");
  // Only where it is installed: a launcher that is not there would fail every CMake configure
  // of the host's builds.
  if (const std::string farm_cc = SiblingBinary("farm-cc"); access(farm_cc.c_str(), X_OK) == 0) {
    options.wheel_builds.farm_cc = farm_cc;
  }
  std::string labels_text;
  std::vector<std::string> gpu_texts;
  std::string log_level = "info";
  std::string cache_size = "10GiB";
  std::string max_action_disk = "4GiB";
  std::string disk_reserve = "2GiB";
  bool no_sandbox = false;

  CLI::App app{"farm-worker: a Wheelfarm build host; dials out to the coordinator"};
  app.add_option("--coordinator", options.coordinator,
                 "coordinator gRPC address (env FARM_COORDINATOR)")
      ->capture_default_str();
  app.add_option("--token-file", options.token_file,
                 "file holding the farm token (env FARM_TOKEN_FILE)");
  app.add_option("--tls-ca", options.tls.ca_file,
                 "CA of the coordinator's certificate: dial with TLS (env FARM_TLS_CA)");
  app.add_option("--tls-cert", options.tls.cert_file,
                 "this worker's client certificate, for a coordinator with --tls-client-ca "
                 "(env FARM_TLS_CERT)");
  app.add_option("--tls-key", options.tls.key_file,
                 "the key of --tls-cert, chmod 600 (env FARM_TLS_KEY)");
  app.add_option("--name", options.name, "worker name, unique in the farm")->capture_default_str();
  app.add_option("--work-dir", options.work_dir,
                 "scratch space for actions (default ~/.cache/wheelfarm/worker-NAME)");
  app.add_option(
      "--slots", options.capabilities.slots,
      "concurrent CUDA compile jobs (default: one per ~4 GiB RAM, at most one per core)");
  app.add_option("--labels", labels_text, "k=v,... advertised to the scheduler");
  app.add_option("--cuda-path", options.capabilities.cuda_paths,
                 "CUDA toolkit root(s) to offer (default: discover; 'none': offer none)");
  app.add_option("--gpu", gpu_texts,
                 "a GPU of this host, SM[:NAME[:MEMORY]] (e.g. sm_90:H100:80GiB), repeatable: "
                 "for hosts where the driver cannot be asked; replaces detection");
  app.add_option("--cache-size", cache_size,
                 "bound of the local blob cache, linked copies included (e.g. 10GiB)")
      ->capture_default_str();
  app.add_option("--max-action-disk", max_action_disk,
                 "what one action may put on this worker's disk: its inputs laid out and what "
                 "it writes (refused before layout, stopped while running when over)")
      ->capture_default_str();
  app.add_option("--disk-reserve", disk_reserve,
                 "free space every action leaves on the work dir's disk, for the cache and "
                 "other tenants")
      ->capture_default_str();
  app.add_option("--builds-dir", options.wheel_builds.builds_root,
                 "where wheel builds run; the same path on every host keeps the action cache "
                 "warm across hosts")
      ->capture_default_str();
  app.add_option("--farm-nvcc", options.wheel_builds.farm_nvcc,
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
  if (auto hp = farm::ParseHostPort(options.coordinator); !hp.ok()) {
    log->error("--coordinator: {}", hp.status().message());
    return farm::kExitConfig;
  }
  auto cache_bytes = farm::ParseByteSize(cache_size);
  if (!cache_bytes.ok()) {
    log->error("--cache-size: {}", cache_bytes.status().message());
    return farm::kExitConfig;
  }
  options.cache_bytes = *cache_bytes;
  for (const auto& [flag, text, bytes] :
       {std::tuple{"--max-action-disk", &max_action_disk, &options.disk.max_action_bytes},
        std::tuple{"--disk-reserve", &disk_reserve, &options.disk.reserve_bytes}}) {
    auto parsed = farm::ParseByteSize(*text);
    if (!parsed.ok()) {
      log->error("{}: {}", flag, parsed.status().message());
      return farm::kExitConfig;
    }
    *bytes = *parsed;
  }
  auto labels = farm::worker::ParseLabels(labels_text);
  if (!labels.ok()) {
    log->error("{}", labels.status().message());
    return farm::kExitConfig;
  }
  options.capabilities.labels = *labels;
  for (const auto& text : gpu_texts) {
    auto gpu = farm::ParseGpuDeclaration(text);
    if (!gpu.ok()) {
      log->error("{}", gpu.status().message());
      return farm::kExitConfig;
    }
    options.capabilities.declared_gpus.push_back(*std::move(gpu));
  }
  options.sandbox = !no_sandbox;

  auto worker = farm::worker::Worker::Start(std::move(options));
  if (!worker.ok()) {
    log->error("{}", worker.status().message());
    return farm::ExitCodeForStatus(worker.status());
  }
  absl::Notification stop;
  std::thread signal_waiter([&stop, log] {
    int sig = farm::WaitForTerminationSignal();
    log->info("signal {} received", sig);
    stop.Notify();
  });
  signal_waiter.detach();
  absl::Status result = (*worker)->Run(stop);
  if (!result.ok()) {
    log->error("{}", result.message());
    return farm::ExitCodeForStatus(result);
  }
  return farm::kExitOk;
}
