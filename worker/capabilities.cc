#include "worker/capabilities.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/gpu/gpu_device.h"
#include "libfarm/gpu/gpu_probe.h"
#include "libfarm/host/host_probe.h"
#include "libfarm/host/shared_libraries.h"
#include "libfarm/logging/logger.h"
#include "libfarm/text/utf8.h"
#include "libfarm/text/utf8_fields.h"
#include "libfarm/toolkit/toolkit_check.h"
#include "libfarm/toolkit/toolkit_probe.h"
#include "worker/python_interpreters.h"

namespace farm::worker {

absl::StatusOr<std::map<std::string, std::string>> ParseLabels(const std::string& text) {
  std::map<std::string, std::string> labels;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    std::vector<std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    std::string key(absl::StripAsciiWhitespace(kv[0]));
    const bool key_ok = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '/' || c == '-';
    });
    if (kv.size() != 2 || !key_ok || absl::StrContains(kv[1], '=')) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid label '", item,
                       "' in --labels: expected key=value pairs separated by commas, "
                       "e.g. instance=m8g.8xlarge,zone=a"));
    }
    labels[key] = std::string(absl::StripAsciiWhitespace(kv[1]));
  }
  return labels;
}

absl::StatusOr<farm::v1::WorkerCapabilities> SendableCapabilities(
    const farm::v1::WorkerCapabilities& detected) {
  for (const auto& [key, value] : detected.labels()) {
    if (!IsValidUtf8(key) || !IsValidUtf8(value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "label '", Utf8Prefix(ValidUtf8OrEscaped(key), 64), "' (\"",
          Utf8Prefix(ValidUtf8OrEscaped(value), 64),
          "\") is not UTF-8, which the coordinator cannot take. Fix: pass --labels as UTF-8 "
          "text"));
    }
  }
  farm::v1::WorkerCapabilities sendable = detected;
  for (const InvalidUtf8Field& f : InvalidUtf8Fields(detected, 64)) {
    ComponentLogger("worker")->warn("{} (\"{}\") is not UTF-8: the coordinator is sent it escaped",
                                    f.path, f.value);
  }
  EscapeInvalidUtf8Fields(&sendable);
  return sendable;
}

absl::StatusOr<farm::v1::WorkerCapabilities> DetectCapabilities(const CapabilityOptions& options) {
  auto log = ComponentLogger("worker");
  const HostInfo host = ProbeHost();
  farm::v1::WorkerCapabilities caps;
  caps.set_os(host.os);
  caps.set_cpu_arch(host.cpu_arch);
  caps.set_glibc(host.glibc);
  caps.set_cores(host.cores);
  caps.set_ram_bytes(host.ram_bytes);
  caps.set_hostname(host.hostname);
  caps.set_worker_version(FARM_VERSION);
  auto disk = FreeDiskBytes(options.work_dir);
  if (!disk.ok()) return disk.status();
  caps.set_disk_free_bytes(*disk);
  caps.set_slots(options.slots > 0 ? options.slots : DefaultSlots(host.cores, host.ram_bytes));
  for (const auto& [k, v] : options.labels) (*caps.mutable_labels())[k] = v;
  for (auto& python : DetectPythonInterpreters()) {
    log->info("python{} for build environments: {} ({})", python.version(), python.path(),
              python.release());
    *caps.add_python() = std::move(python);
  }
  if (caps.python_size() == 0) {
    log->warn(
        "no Python interpreter that can make virtualenvs found: this worker cannot host wheel "
        "builds. Fix: install python3 and python3-venv");
  }

  const bool none = options.cuda_paths.size() == 1 && options.cuda_paths[0] == "none";
  std::vector<std::string> roots;
  if (!none) roots = options.cuda_paths.empty() ? DiscoverToolkitRoots() : options.cuda_paths;
  for (const auto& root : roots) {
    // Complete and runnable here, checked now: a toolkit missing cicc, or built for a CPU
    // this host cannot run, would otherwise fail every action leased to this worker.
    auto toolkit = ProbeUsableToolkit(root);
    if (!toolkit.ok()) {
      // A path the operator named must work; a discovered one that doesn't is skipped.
      if (!options.cuda_paths.empty()) {
        return absl::Status(
            toolkit.status().code(),
            absl::StrCat("--cuda-path ", root, " refused: ", toolkit.status().message()));
      }
      log->warn("skipping CUDA toolkit at {}: {}", root, toolkit.status().message());
      continue;
    }
    auto* cuda = caps.add_cuda();
    cuda->set_version(toolkit->version);
    cuda->set_release(toolkit->release);
    cuda->set_path(toolkit->root);
    for (const auto& sm : toolkit->sms) cuda->add_sms(sm);
  }
  if (caps.cuda_size() == 0) {
    log->warn(
        "no CUDA toolkit found{}: this worker can host builds but cannot compile device "
        "code. Fix: install the CUDA toolkit or pass --cuda-path",
        none ? " (--cuda-path none)" : "");
  }
  // Declared GPUs stand for the driver's answer: a host where it cannot be asked.
  std::vector<farm::v1::GpuDevice> gpus =
      options.declared_gpus.empty() ? ProbeGpus() : options.declared_gpus;
  for (auto& gpu : gpus) *caps.add_gpus() = std::move(gpu);
  if (caps.gpus_size() > 0) {
    log->info("GPUs for smoke tests: {}", GpuSummary(caps.gpus()));
  }
  // Recipes' host_library prerequisites are checked against these when a build is planned.
  std::vector<std::string> toolkit_roots;
  for (const auto& t : caps.cuda()) toolkit_roots.push_back(t.path());
  for (auto& name : DetectSharedLibraries(host.cpu_arch, toolkit_roots)) {
    caps.add_libraries(std::move(name));
  }
  log->info("{} shared libraries for host_library prerequisites (ldconfig -p and the toolkits)",
            caps.libraries_size());
  return caps;
}

}  // namespace farm::worker
