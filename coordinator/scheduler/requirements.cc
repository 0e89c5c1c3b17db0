#include "coordinator/scheduler/requirements.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/gpu/gpu_device.h"
#include "libfarm/host/shared_libraries.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/versions/dotted_version.h"

namespace farm::coordinator {
namespace {

bool VersionAtMost(const std::string& have, const std::string& limit) {
  auto c = CompareDottedVersions(have, limit);
  return c.ok() && *c <= 0;
}

// "V13.0.88" (nvcc --version, CudaToolkit.release) -> "13.0.88" (Requirements.cuda_release).
std::string ReleaseNumber(const std::string& release) {
  return !release.empty() && release.front() == 'V' ? release.substr(1) : release;
}

bool ToolkitMatches(const farm::v1::Requirements& req, const farm::v1::CudaToolkit& t) {
  // Compared as text: both sides copy nvcc's own digits (farm-nvcc from its plan's
  // __CUDACC_VER_*__, the worker from `nvcc --version`).
  if (!req.cuda_release().empty() && ReleaseNumber(t.release()) != req.cuda_release()) {
    return false;
  }
  if (!req.cuda_version().empty()) {
    auto c = CompareDottedVersions(t.version(), req.cuda_version());
    if (!c.ok() || *c != 0) return false;
  }
  if (!req.cuda_min().empty() && !VersionAtMost(req.cuda_min(), t.version())) return false;
  if (!req.cuda_max().empty() && !VersionAtMost(t.version(), req.cuda_max())) return false;
  return std::all_of(req.sms().begin(), req.sms().end(), [&](const std::string& sm) {
    // Toolkits list base targets (nvcc --list-gpu-code): sm_90 stands for sm_90a and sm_100
    // for sm_100f, which the same toolkit compiles.
    std::string base = sm;
    if (!base.empty() && (base.back() == 'a' || base.back() == 'f')) base.pop_back();
    return std::find(t.sms().begin(), t.sms().end(), sm) != t.sms().end() ||
           std::find(t.sms().begin(), t.sms().end(), base) != t.sms().end();
  });
}

std::string DescribeCudaNeed(const farm::v1::Requirements& req) {
  std::vector<std::string> parts;
  if (!req.cuda_release().empty()) {
    parts.push_back(absl::StrCat("CUDA ", req.cuda_release()));
  } else if (!req.cuda_version().empty()) {
    parts.push_back(absl::StrCat("CUDA ", req.cuda_version()));
  }
  if (!req.cuda_min().empty()) parts.push_back(absl::StrCat("CUDA >= ", req.cuda_min()));
  if (!req.cuda_max().empty()) parts.push_back(absl::StrCat("CUDA <= ", req.cuda_max()));
  if (!req.sms().empty()) {
    parts.push_back(absl::StrCat("a toolkit that supports ", absl::StrJoin(req.sms(), ", ")));
  }
  return absl::StrJoin(parts, " and ");
}

}  // namespace

std::string PythonVersions(const farm::v1::WorkerCapabilities& worker) {
  std::vector<std::string> versions;
  for (const auto& p : worker.python()) versions.push_back(p.version());
  return versions.empty() ? "no Python" : absl::StrJoin(versions, ", ");
}

absl::Status ValidateRequirements(const farm::v1::Requirements& req) {
  for (const std::string* v : {&req.max_glibc(), &req.cuda_version(), &req.cuda_min(),
                               &req.cuda_max(), &req.cuda_release()}) {
    if (!v->empty() && !ParseDottedVersion(*v).ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("requirement version '", *v, "' is not a version like 2.35 or 13.0"));
    }
  }
  if (!req.gpu_sm().empty() && !GpuSm(req.gpu_sm()).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("required GPU '", req.gpu_sm().substr(0, 16), "' is not an SM like sm_90"));
  }
  if (req.libraries_size() > 64) {
    return absl::InvalidArgumentError("an action requires at most 64 libraries");
  }
  for (const std::string& lib : req.libraries()) {
    if (!IsSoname(lib)) {
      return absl::InvalidArgumentError(
          absl::StrCat("required library '", lib, "' is not a soname like libcudnn.so.9"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPlacement(const farm::v1::Requirements& req,
                            const farm::v1::WorkerCapabilities& worker,
                            const PlacementPolicy& policy) {
  FARM_RETURN_IF_ERROR(CheckRequirements(req, worker));
  const auto& archs = policy.portable_cpu_archs;
  if (req.cpu_arch().empty() && !archs.empty() &&
      std::find(archs.begin(), archs.end(), worker.cpu_arch()) == archs.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the farm runs actions that name no CPU arch only on ", absl::StrJoin(archs, " or "),
        " workers (--device-cpu-archs), has ", worker.cpu_arch()));
  }
  return absl::OkStatus();
}

absl::Status CheckRequirements(const farm::v1::Requirements& req,
                               const farm::v1::WorkerCapabilities& w) {
  auto miss = [](auto&&... parts) { return absl::FailedPreconditionError(absl::StrCat(parts...)); };
  if (!req.os().empty() && req.os() != w.os()) {
    return miss("needs os ", req.os(), ", has ", w.os());
  }
  if (!req.cpu_arch().empty() && req.cpu_arch() != w.cpu_arch()) {
    return miss("needs cpu_arch ", req.cpu_arch(), ", has ", w.cpu_arch());
  }
  if (!req.max_glibc().empty() && !VersionAtMost(w.glibc(), req.max_glibc())) {
    return miss("needs glibc <= ", req.max_glibc(), ", has ", w.glibc());
  }
  if (req.sandbox() && !w.sandboxed()) {
    return miss("needs a sandboxed worker (a filesystem image action), runs with --no-sandbox");
  }
  if (req.min_ram_bytes() > w.ram_bytes()) {
    return miss("needs ", req.min_ram_bytes() >> 20, " MiB RAM, has ", w.ram_bytes() >> 20, " MiB");
  }
  for (const auto& [key, value] : req.labels()) {
    auto it = w.labels().find(key);
    if (it == w.labels().end() || it->second != value) {
      return miss("needs label ", key, "=", value,
                  it == w.labels().end() ? ", has none" : absl::StrCat(", has ", it->second));
    }
  }
  if (!req.python_version().empty() &&
      std::none_of(w.python().begin(), w.python().end(), [&](const farm::v1::PythonInterpreter& p) {
        return p.version() == req.python_version();
      })) {
    return miss("needs python", req.python_version(), ", has ", PythonVersions(w));
  }
  if (!req.gpu_sm().empty() &&
      std::none_of(w.gpus().begin(), w.gpus().end(),
                   [&](const farm::v1::GpuDevice& g) { return g.sm() == req.gpu_sm(); })) {
    return miss("needs a GPU of ", req.gpu_sm(), ", has ",
                w.gpus().empty() ? "none" : GpuSummary(w.gpus()));
  }
  for (const std::string& lib : req.libraries()) {
    if (std::find(w.libraries().begin(), w.libraries().end(), lib) == w.libraries().end()) {
      return miss("needs library ", lib, ", which its loader does not list");
    }
  }
  const bool needs_cuda = !req.cuda_version().empty() || !req.cuda_min().empty() ||
                          !req.cuda_max().empty() || !req.cuda_release().empty() ||
                          req.sms_size() > 0;
  if (needs_cuda &&
      std::none_of(w.cuda().begin(), w.cuda().end(),
                   [&](const farm::v1::CudaToolkit& t) { return ToolkitMatches(req, t); })) {
    std::vector<std::string> have;
    // Name releases when one was asked for: "has CUDA 13.0" would not say why 13.0.88 missed.
    for (const auto& t : w.cuda()) {
      have.push_back(req.cuda_release().empty() || t.release().empty()
                         ? t.version()
                         : ReleaseNumber(t.release()));
    }
    return miss(
        "needs ", DescribeCudaNeed(req), ", has ",
        have.empty() ? "no CUDA toolkit" : absl::StrCat("CUDA ", absl::StrJoin(have, ", ")));
  }
  return absl::OkStatus();
}

}  // namespace farm::coordinator
