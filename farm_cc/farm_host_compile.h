// One C/C++ compile on the farm: the toolchain's and the compile's files into the CAS (each
// file once: the CAS keeps what it has), one filesystem image action that runs the call's own
// argv in its own working directory on a worker of the toolchain's CPU, and its object and
// dependency file written back where the call names them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "farm_cc/compile_inputs.h"
#include "farm_cc/compiler_locator.h"
#include "farm_cc/farm_cc_config.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/actions/call_phases.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/cc/cc_command_line.h"
#include "libfarm/cc/host_toolchain.h"

namespace farm {

struct FarmHostCompileResult {
  int exit_code = 0;
  std::string stdout_text;
  std::string stderr_text;
  bool cache_hit = false;
  std::string worker;
};

// The environment a compile on the farm gets from this one: what GCC and clang read (PATH,
// locale, CPATH and the other include paths, SOURCE_DATE_EPOCH, COMPILER_PATH, GCC_EXEC_PREFIX,
// LD_LIBRARY_PATH, PWD when it is the working directory). FAILED_PRECONDITION, with the
// reason, for one that makes the compile read or write what the farm cannot see:
// DEPENDENCIES_OUTPUT, SUNPRO_DEPENDENCIES, LD_PRELOAD, GCC_COMPARE_DEBUG, a PWD that names
// the working directory through a link.
absl::StatusOr<std::map<std::string, std::string>> CompileEnvironment(
    const std::map<std::string, std::string>& env, const std::string& cwd);

// The scheduler's answer when no online worker qualifies (ActionStatus.unplaceable, never its
// wording), said as what the user can change: a worker of the toolchain's CPU that sandboxes
// its actions, with each worker's refusal. FAILED_PRECONDITION carrying
// FALLBACK_REASON_NO_WORKER (libfarm/launcher/fallback_reason.h); OK for any other status.
absl::Status NoWorkerForToolchain(const farm::v1::ActionStatus& status,
                                  const std::string& cpu_arch);

// Runs the call on a worker with `inputs` (compile_inputs.h) and `action_env` (from
// CompileEnvironment): takes another tree's answer (cross_tree_cache.h) or uploads what the
// CAS lacks, runs and collects. FAILED_PRECONDITION with the reason for what would not be
// the same on a worker. An exit code other than 0 is the worker's compile's; UNAVAILABLE and
// the like say the farm could not run it. Each phase's time goes to `clock`.
absl::StatusOr<FarmHostCompileResult> CompileOnFarm(
    const CcInvocation& call, const cc::CcCompilePlan& plan,
    const cc::HostToolchainFiles& toolchain, const CompileInputs& inputs,
    const std::map<std::string, std::string>& action_env, const std::string& cwd,
    const FarmCcConfig& options, ActionClient* actions, CasClient* cas, CallClock& clock);

}  // namespace farm
