// The CUDA toolkits `farmctl toolkit install` can assemble from PyPI: for each nvcc release,
// the exact nvidia-* wheels that make it up.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace farm {

struct PinnedWheel {
  std::string package;  // "nvidia-cuda-nvcc"
  std::string version;  // "13.0.88"
  // The platform tag's family the wheel is published under ("manylinux2014",
  // "manylinux_2_27"), before "_<cpu arch>": pip's --platform matches it exactly.
  std::string platform = "manylinux2014";
};

struct ToolkitPin {
  std::string release;              // "13.0.88": what its `nvcc --version` says ("V13.0.88")
  std::string source;               // where the pins were read, e.g. "cuda-toolkit 13.0.2"
  std::vector<PinnedWheel> wheels;  // the compiler: what every toolkit holds
  // CUDA libraries a toolkit may hold besides (`farmctl toolkit install --libraries`), by name
  // ("cublas": cuBLAS and cuBLASLt), from the same metapackage's extras.
  std::map<std::string, PinnedWheel> libraries;
};

// Every pin, oldest release first.
const std::vector<ToolkitPin>& ToolkitPins();

// The pin of `release` ("13.0.88"), or nullptr.
const ToolkitPin* FindToolkitPin(absl::string_view release);

// "13.0.48, 13.0.88, ...": the pinned releases, for messages.
std::string PinnedReleases();

// "cublas": the names `libraries` may hold, for messages.
std::string ToolkitLibraryNames();

// The PyPI platform tag pip downloads for `cpu_arch` ("x86_64", "aarch64"); empty for a CPU
// NVIDIA publishes no toolkit wheels for.
std::string ToolkitPlatformTag(absl::string_view cpu_arch);

// The platform tag of `wheel` for `cpu_arch`: "manylinux_2_27_aarch64".
std::string WheelPlatformTag(const PinnedWheel& wheel, absl::string_view cpu_arch);

// The folder of the wheels the toolkit root is in: "nvidia/cu13/" for 13.x.
std::string ToolkitWheelFolder(absl::string_view release);

}  // namespace farm
