// farm-cc's settings; every argument is the compiler's, so they come from the environment,
// read by one loader from one table of variables (libfarm/launcher/launcher_config.h).
#pragma once

#include <cstdint>

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "libfarm/cc/base_dir.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/jobs/local_job_limits.h"
#include "libfarm/jobs/local_job_slot.h"
#include "libfarm/process/environment.h"

namespace farm {

struct FarmCcConfig {
  // Which coordinator, and the build the compiles count in: as farm-nvcc reads them
  // (libfarm/launcher/launcher_target.h), so one build counts both launchers' calls.
  CoordinatorChoice target;
  std::string build_id;
  bool disabled = false;  // FARM_CC_DISABLE=1: always the local compiler
  // FARM_CC_STRICT=1: a compile farm-cc would run locally fails instead, naming the reason.
  bool strict = false;
  // FARM_CC_CACHE_DIR: the toolchain closures found and the scans kept (default
  // $XDG_CACHE_HOME/wheelfarm/farm-cc, else ~/.cache/wheelfarm/farm-cc).
  std::string cache_dir;
  // FARM_CC_KEEP_SCANS=0 (set by farm-nvcc, whose host compiles read a temporary file of a
  // private directory, so no later call has the same key): no scan is kept or looked up.
  bool keep_scans = true;
  // FARM_CC_SCAN: "includes" (the default) reads which files a compile may read from its
  // includes (compile_inputs.h) and runs the compiler's -M scan only where that cannot tell;
  // "compiler" runs the scan for every compile.
  bool read_includes = true;
  // FARM_CC_SCAN_CACHE_SIZE ("1GiB", the default): the bound of the kept scans, least
  // recently used going first (scan_cache.h).
  uint64_t scan_cache_bytes = uint64_t{1} << 30;
  // The build host's job slots (libfarm/jobs: FARM_LOCAL_JOBS_LIGHT, _HEAVY, _DIR): the
  // dependency scan takes a light one, a local compile a heavy one. Unset: none taken.
  std::optional<LocalJobLimits> local_jobs;
  // FARM_LOCAL_JOB_PRIORITY (set by farm-nvcc for the host compile it hands over: closing, or
  // long-unit): the slots go ahead of other units' first steps.
  JobPriority local_job_priority = JobPriority::kOpening;
  // FARM_CC_BASEDIR: the directory of the build's sources and build tree; set, compiles are
  // also kept and found across trees (cross_tree_cache.h).
  std::optional<cc::BaseDir> base_dir;
  std::string log_level = "info";  // FARM_CC_LOG
};

// farm-cc's settings as `env` has them (GetEnv in farm-cc). INVALID_ARGUMENT for the first
// value it cannot take, naming the variable, the value and the fix: nothing is ignored.
absl::StatusOr<FarmCcConfig> LoadFarmCcConfig(const EnvironmentLookup& env);

}  // namespace farm
