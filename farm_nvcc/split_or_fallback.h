// farm-nvcc's one decision: split this call over the farm, or run plain nvcc (exec'd, so
// its output and exit code are nvcc's own).
#pragma once

#include <optional>

#include "farm_nvcc/farm_nvcc_config.h"
#include "farm_nvcc/nvcc_locator.h"

namespace farm {

// Returns the exit code, or does not return when it runs plain nvcc.
int SplitOrFallback(const NvccInvocation& call, const FarmNvccConfig& options);

// Replaces this process with plain nvcc, which keeps a heavy local job slot (when
// `local_jobs` is set) until it ends. Returns only if exec fails (exit code 127).
int ExecPlainNvcc(const NvccInvocation& call,
                  const std::optional<LocalJobLimits>& local_jobs = std::nullopt);

}  // namespace farm
