// `farmctl toolkit install`: a CUDA toolkit root assembled from the pinned nvidia-* wheels
// (toolkit_pins.h), checked, and published atomically.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/toolkit/pip_wheel_source.h"
#include "libfarm/toolkit/toolkit_check.h"

namespace farm {

struct ToolkitInstallRequest {
  std::string release;   // "13.2.86": a pinned release
  std::string cpu_arch;  // "x86_64" or "aarch64"; empty: this host's
  std::string prefix;    // the toolkit root to make (bin/nvcc will be there)
  // CUDA libraries to add to the compiler (ToolkitPin::libraries names: "cublas"), with the
  // development links (libcublas.so) a build's link step looks for.
  std::vector<std::string> libraries;
};

struct ToolkitInstallResult {
  bool already_installed = false;  // the prefix held this toolkit already
  ToolkitCheck check;
  std::vector<std::string> wheels;  // the wheel files it was made from
};

// The file in a toolkit root that says what `farmctl toolkit install` put there; written
// last, after the check passed.
inline constexpr char kToolkitMarkerFile[] = ".wheelfarm-toolkit.json";

// Makes `request.prefix` the toolkit `request.release` for `request.cpu_arch`: downloads
// each pinned wheel with `source`, unpacks its nvidia/cuXY/ folder into <prefix>.partial,
// makes bin/ and nvvm/bin/ programs executable, checks the result (CheckToolkit with the
// pinned release) and renames it to `prefix`. Concurrent installs of one prefix wait for
// each other (<prefix>.lock). A prefix this function already made for the same release
// and CPU, with at least the libraries asked for, is checked and returned
// (`already_installed`); any other existing, non-empty prefix is refused, never overwritten. Errors
// leave no partial tree behind. A release with no pin fails naming the pinned releases and the
// nvidia-cuda-nvcc versions on offer.
absl::StatusOr<ToolkitInstallResult> InstallToolkit(
    const ToolkitInstallRequest& request, WheelSource& source,
    const std::function<void(absl::string_view)>& progress = nullptr);

}  // namespace farm
