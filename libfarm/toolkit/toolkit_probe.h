// Finding CUDA toolkits on a host and asking each what it can compile for.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace farm {

struct ToolkitInfo {
  std::string root;              // directory holding bin/nvcc
  std::string version;           // "13.0"
  std::string release;           // "V13.0.88"
  std::vector<std::string> sms;  // "sm_75", ... as `nvcc --list-gpu-code` lists them
};

// Extracts ("13.0", "V13.0.88") from `nvcc --version` output.
absl::StatusOr<std::pair<std::string, std::string>> ParseNvccVersion(const std::string& text);

// Extracts the real SM targets ("sm_XX") from `nvcc --list-gpu-code` output, in its order.
std::vector<std::string> ParseGpuCodeList(const std::string& text);

// Runs the toolkit's nvcc at `root`/bin/nvcc to learn its version and SMs.
absl::StatusOr<ToolkitInfo> ProbeToolkit(const std::string& root);

// Where toolkits usually are: $CUDA_HOME, $CUDA_PATH, the nvcc on $PATH, and
// /usr/local/cuda*. Returned roots hold an nvcc executable (not a wrapper script) and
// ptxas, and are unique after resolving symlinks.
std::vector<std::string> DiscoverToolkitRoots();

}  // namespace farm
