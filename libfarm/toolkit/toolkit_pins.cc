#include "libfarm/toolkit/toolkit_pins.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace farm {
namespace {

// Where these come from: NVIDIA's `cuda-toolkit` metapackage on PyPI pins, for each CUDA
// release, the exact version of every component wheel (its METADATA's `Requires-Dist:
// nvidia-cuda-nvcc==13.0.88.*; ... extra == 'all'`). Each row is the newest cuda-toolkit
// release carrying that nvcc, read on 2026-11-23 with
//   pip download --no-deps --only-binary=:all: cuda-toolkit==13.0.2
// Every wheel below was then confirmed on PyPI for manylinux2014_x86_64 and
// manylinux2014_aarch64 (`pip install --dry-run --no-deps --only-binary=:all: --platform
// ... --target T --report R pkg==ver`). 13.0.88 and 13.2.86 were installed and checked
// (nvcc --version, a compile on the farm); the others only resolved.
// CUDA 12.x wheels carry neither nvcc nor cicc, so 12.x cannot be pinned here.
// nvidia-cuda-cccl follows CCCL's own numbering from 13.3 on (13.3.3.3.1 ...).
// The cublas column is the same metapackages' extra 'cublas', read on 2026-12-07; each version
// is listed by `pip index versions nvidia-cublas` for both CPUs; 13.1.0.3 for aarch64 was
// installed and linked (bitsandbytes).
const std::vector<ToolkitPin>& Pins() {
  static const auto* pins = [] {
    auto* v = new std::vector<ToolkitPin>;
    // release, source, nvcc = nvvm = crt version, runtime, cccl, cublas (extra 'cublas') and
    // the platform family PyPI has that cublas wheel under
    struct Row {
      const char* release;
      const char* source;
      const char* runtime;
      const char* cccl;
      const char* cublas;
      const char* cublas_platform = "manylinux_2_27";
    };
    const Row rows[] = {
        {"13.0.48", "cuda-toolkit 13.0.0", "13.0.48", "13.0.50", "13.0.0.19"},
        {"13.0.88", "cuda-toolkit 13.0.2", "13.0.96", "13.0.85", "13.1.0.3"},
        {"13.1.80", "cuda-toolkit 13.1.0", "13.1.80", "13.1.78", "13.2.0.9"},
        {"13.1.115", "cuda-toolkit 13.1.1", "13.1.80", "13.1.115", "13.2.1.1"},
        {"13.2.51", "cuda-toolkit 13.2.0", "13.2.51", "13.2.27", "13.3.0.5"},
        {"13.2.78", "cuda-toolkit 13.2.1", "13.2.75", "13.2.75", "13.4.0.1"},
        {"13.2.86", "cuda-toolkit 13.2.2", "13.2.86", "13.2.86", "13.4.1.3"},
        {"13.3.33", "cuda-toolkit 13.3.0", "13.3.29", "13.3.3.3.1", "13.5.1.27"},
        {"13.3.73", "cuda-toolkit 13.3.1", "13.3.29", "13.3.3.4.1", "13.6.0.2"},
        {"13.4.59", "cuda-toolkit 13.4.1.0", "13.4.49", "13.3.4.2.1", "13.7.0.27"},
        {"13.4.92", "cuda-toolkit 13.4.3", "13.4.92", "13.3.4.3.1", "13.8.0.4"},
        {"13.5.37", "cuda-toolkit 13.5.0", "13.5.37", "13.3.5.0.6", "13.10.0.20", "manylinux2014"},
    };
    for (const Row& r : rows) {
      // nvcc (nvcc, ptxas, fatbinary, cudafe++), nvvm (cicc, libdevice), crt (the headers
      // nvcc's preprocessors include), runtime (cuda_runtime.h), cccl (CUB, Thrust,
      // libcu++, which nvcc puts on the include path).
      v->push_back({r.release,
                    r.source,
                    {{"nvidia-cuda-nvcc", r.release},
                     {"nvidia-nvvm", r.release},
                     {"nvidia-cuda-crt", r.release},
                     {"nvidia-cuda-runtime", r.runtime},
                     {"nvidia-cuda-cccl", r.cccl}},
                    // cuBLAS (libcublas, libcublasLt, cublas_v2.h): what bitsandbytes links.
                    {{"cublas", {"nvidia-cublas", r.cublas, r.cublas_platform}}}});
    }
    return v;
  }();
  return *pins;
}

}  // namespace

const std::vector<ToolkitPin>& ToolkitPins() { return Pins(); }

const ToolkitPin* FindToolkitPin(absl::string_view release) {
  for (const ToolkitPin& pin : Pins()) {
    if (pin.release == release) return &pin;
  }
  return nullptr;
}

std::string PinnedReleases() {
  std::vector<std::string> releases;
  for (const ToolkitPin& pin : Pins()) releases.push_back(pin.release);
  return absl::StrJoin(releases, ", ");
}

std::string ToolkitLibraryNames() {
  std::vector<std::string> names;
  for (const auto& [name, wheel] : Pins().front().libraries) names.push_back(name);
  return absl::StrJoin(names, ", ");
}

std::string WheelPlatformTag(const PinnedWheel& wheel, absl::string_view cpu_arch) {
  return absl::StrCat(wheel.platform, "_", cpu_arch);
}

std::string ToolkitPlatformTag(absl::string_view cpu_arch) {
  if (cpu_arch == "x86_64" || cpu_arch == "aarch64")
    return absl::StrCat("manylinux2014_", cpu_arch);
  return "";
}

std::string ToolkitWheelFolder(absl::string_view release) {
  return absl::StrCat("nvidia/cu", release.substr(0, release.find('.')), "/");
}

}  // namespace farm
