#include "libfarm/jobs/local_job_limits.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "libfarm/host/host_probe.h"
#include "libfarm/process/environment.h"

namespace farm {
namespace {

// A heavy job (a C++ or CUDA host compile of a large unit) peaks at 1 to 3 GiB.
constexpr uint64_t kBytesPerHeavyJob = 2ULL << 30;

absl::StatusOr<int> CountFrom(const char* variable, const std::string& value) {
  int n = 0;
  if (!absl::SimpleAtoi(absl::string_view(value), &n) || n < 1 || n > kMaxLocalJobs) {
    return absl::InvalidArgumentError(absl::StrCat(
        variable, "='", value, "' is not a number of local jobs. Fix: set it to a ",
        "whole number from 1 to ", kMaxLocalJobs, ", or unset it for this host's ", "default"));
  }
  return n;
}

}  // namespace

const char* JobClassName(JobClass job_class) {
  return job_class == JobClass::kHeavy ? "heavy" : "light";
}

absl::StatusOr<LocalJobLimits> LocalJobLimitsFor(uint32_t cores, uint64_t ram_bytes, uint32_t uid,
                                                 const EnvironmentLookup& env) {
  const uint64_t cpus = std::max<uint32_t>(cores, 1);
  LocalJobLimits limits;
  limits.light = static_cast<int>(std::min<uint64_t>(2 * cpus, kMaxLocalJobs));
  limits.heavy = static_cast<int>(
      std::clamp<uint64_t>(std::min(cpus, ram_bytes / kBytesPerHeavyJob), 1, kMaxLocalJobs));
  const std::string runtime_dir = env("XDG_RUNTIME_DIR");
  limits.dir = absl::StartsWith(runtime_dir, "/") ? absl::StrCat(runtime_dir, "/wheelfarm-jobs")
                                                  : absl::StrCat("/tmp/wheelfarm-jobs-", uid);

  // An empty value is no value (`FARM_LOCAL_JOBS_HEAVY= cmd`), as unset.
  if (const std::string v = env(kLocalJobsLightVariable); !v.empty()) {
    auto n = CountFrom(kLocalJobsLightVariable, v);
    if (!n.ok()) return n.status();
    limits.light = *n;
  }
  if (const std::string v = env(kLocalJobsHeavyVariable); !v.empty()) {
    auto n = CountFrom(kLocalJobsHeavyVariable, v);
    if (!n.ok()) return n.status();
    limits.heavy = *n;
  }
  if (const std::string v = env(kLocalJobsDirVariable); !v.empty()) {
    if (v[0] != '/') {
      return absl::InvalidArgumentError(absl::StrCat(
          kLocalJobsDirVariable, "='", v,
          "' is not an absolute path. Fix: set it to a directory of yours, e.g. /tmp/jobs-", uid,
          ", or unset it for the default"));
    }
    limits.dir = v;
  }
  return limits;
}

absl::StatusOr<LocalJobLimits> LocalJobLimitsForThisHost(const EnvironmentLookup& env) {
  const HostInfo host = ProbeHost();
  return LocalJobLimitsFor(host.cores, host.ram_bytes, static_cast<uint32_t>(getuid()), env);
}

absl::StatusOr<LocalJobLimits> LocalJobLimitsFromEnvironment() {
  return LocalJobLimitsForThisHost(GetEnv);
}

}  // namespace farm
