// How many local jobs of each class the build host runs at once, across every farm-nvcc
// and farm-cc process of this user (issue 25 item 7): a recipe's MAX_JOBS can then be as
// wide as the farm, while what falls back to or stays on the build host runs at most this
// many at a time (LocalJobSlot).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "libfarm/process/environment.h"

namespace farm {

// kLight: preprocessing, dependency scans, hashing, uploads, fatbinary: cheap CPU, little RAM.
// kHeavy: local compiles (a fallback, a host compile, cudafe++), links: a whole core and
// much RAM each.
enum class JobClass { kLight, kHeavy };

// "light", "heavy": in slot file names and FARM_LOCAL_JOB_SLOT_HELD.
const char* JobClassName(JobClass job_class);

struct LocalJobLimits {
  int light = 1;
  int heavy = 1;
  std::string dir;  // where the slot files are: <dir>/<class>-<i>.lock
};

inline constexpr char kLocalJobsLightVariable[] = "FARM_LOCAL_JOBS_LIGHT";
inline constexpr char kLocalJobsHeavyVariable[] = "FARM_LOCAL_JOBS_HEAVY";
inline constexpr char kLocalJobsDirVariable[] = "FARM_LOCAL_JOBS_DIR";
// Each a whole number from 1 to this.
inline constexpr int kMaxLocalJobs = 4096;

// The limits for a host of `cores` and `ram_bytes`: light = 2 x cores, heavy = min(cores,
// RAM / 2 GiB), each at least 1; dir = $XDG_RUNTIME_DIR/wheelfarm-jobs when XDG_RUNTIME_DIR
// is an absolute path, else /tmp/wheelfarm-jobs-<uid>. FARM_LOCAL_JOBS_LIGHT,
// FARM_LOCAL_JOBS_HEAVY and FARM_LOCAL_JOBS_DIR replace them (set and not empty); INVALID_ARGUMENT
// (naming the variable, with a Fix) for a count that is not a whole number from 1 to kMaxLocalJobs
// or a directory that is not an absolute path.
absl::StatusOr<LocalJobLimits> LocalJobLimitsFor(uint32_t cores, uint64_t ram_bytes, uint32_t uid,
                                                 const EnvironmentLookup& env);

// LocalJobLimitsFor this host (its online cores and RAM), this user and `env`.
absl::StatusOr<LocalJobLimits> LocalJobLimitsForThisHost(const EnvironmentLookup& env);

// LocalJobLimitsForThisHost in this process's environment.
absl::StatusOr<LocalJobLimits> LocalJobLimitsFromEnvironment();

}  // namespace farm
