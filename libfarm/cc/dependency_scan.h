// The local dependency scan: which files a compile reads, from the compiler's own `-M`.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/cc/cc_command_line.h"

namespace farm::cc {

// Runs `compiler plan.DependencyScanArgs(tmp)` in `cwd` with the current environment and
// returns every file the depfile lists (as written, may be relative to cwd), the source
// included (first when -M leaves it out, as it does for .i/.ii). On a failing scan:
// FAILED_PRECONDITION with the compiler's stderr (the caller then compiles locally, so the
// user sees the real diagnostics).
absl::StatusOr<std::vector<std::string>> ScanDependencies(const std::string& compiler,
                                                          const CcCompilePlan& plan,
                                                          const std::string& cwd);

}  // namespace farm::cc
