// farm-nvcc's settings; it takes no flags of its own (every argument is nvcc's), so they
// come from the environment, read by one loader from one table of variables
// (libfarm/launcher/launcher_config.h).
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/jobs/local_job_limits.h"
#include "libfarm/nvcc/cost_hints.h"
#include "libfarm/nvcc/device_compiler.h"
#include "libfarm/process/environment.h"

namespace farm {

struct FarmNvccConfig {
  // Which coordinator, and the build the calls count in (a shard per arch): as farm-cc reads
  // them (libfarm/launcher/launcher_target.h).
  CoordinatorChoice target;
  std::string build_id;
  bool disabled = false;  // FARM_NVCC_DISABLE=1: always plain nvcc
  // FARM_NVCC_STRICT=1: a call that would run plain nvcc fails instead (strict_mode.h).
  bool strict = false;
  // FARM_NVCC_HOST_COMPILE_AHEAD=0: the host compile waits for the fat binary, as in nvcc.
  bool host_compile_ahead = true;
  // The build host's local job slots (FARM_LOCAL_JOBS_LIGHT, _HEAVY, _DIR): plain nvcc and
  // the link take a heavy one, each local step of a split call one of its class. Unset: none.
  std::optional<LocalJobLimits> local_jobs;
  // FARM_NVCC_LONG_UNIT_SECONDS: a unit whose device code took at least this long on the farm
  // before takes its local slots ahead of other units' (kLongUnitSeconds by default).
  double long_unit_seconds = kLongUnitSeconds;
  // FARM_NVCC_COST_HINTS: what units the farm has not run yet take (cost_hints.h).
  CostHints cost_hints;
  // FARM_NVCC_HOST_COMPILE_ON_FARM=0: each split call's host compile runs here, not through
  // the farm-cc beside farm-nvcc.
  bool host_compile_on_farm = true;
  // That farm-cc, when host_compile_on_farm and it is installed (main() looks). Empty: here.
  std::string farm_cc;
  std::string log_level = "info";  // FARM_NVCC_LOG
};

// farm-nvcc's settings as `env` has them (GetEnv in farm-nvcc). INVALID_ARGUMENT for the
// first value it cannot take, naming the variable, the value and the fix.
absl::StatusOr<FarmNvccConfig> LoadFarmNvccConfig(const EnvironmentLookup& env);

}  // namespace farm
