// Where a translation unit's device jobs run. The farm implementation sends them to the
// coordinator as actions; tests may run them some other way.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "farm/v1/actions.pb.h"
#include "libfarm/nvcc/device_job.h"

namespace farm {

struct DeviceJobOutcome {
  int exit_code = 0;
  std::string stdout_text;  // what cicc and ptxas printed (warnings, -Xptxas -v)
  std::string stderr_text;
  std::string worker;  // who ran it; empty when answered from the action cache
  bool cache_hit = false;
  // The farm's queue, fetch, run and output upload for it; none for a cache hit.
  farm::v1::CallPhases farm_phases;
};

struct DeviceCompileContext {
  std::string cuda_version;  // "13.0"
  // "13.0.88": the worker's toolkit must be exactly this release, the one that planned the
  // compile; its CPU does not matter (cicc and ptxas give the same bytes on any host).
  std::string cuda_release;
  std::string build_id;  // groups the actions into one build (and its shards)
  // The translation unit as its last path components ("native/cuda/Sort.cu"): with a job's
  // shard, the action's history key (farm.v1.Action.history_key).
  std::string source_name;
  // What the build's cost hints (cost_hints.h) say one of its device jobs takes; the farm's
  // history, where it has one, comes first.
  std::optional<double> hinted_seconds;
  // A job to send first and report as soon as its outputs are written (if it exited 0),
  // before the others finish: the one whose outputs let the caller start other work.
  std::optional<size_t> early_job;
  std::function<void()> on_early_job_done;
};

// A unit whose device code took this long on the farm before is started ahead of others on
// the build host (LocalSteps::set_long_unit): the build cannot end before it does.
inline constexpr double kLongUnitSeconds = 120;

class DeviceCompiler {
 public:
  virtual ~DeviceCompiler() = default;
  // What the farm learnt of these jobs' earlier runs: wall seconds each, in order, 0 where it
  // has none. Asked before the unit's local steps, to order the build host's work; one that
  // cannot tell answers zeros.
  virtual std::vector<double> ExpectedSeconds(const std::vector<DeviceJob>& jobs,
                                              const DeviceCompileContext& /*context*/) {
    return std::vector<double>(jobs.size(), 0);
  }
  // Runs every job and, for those that exit 0, writes their outputs to each file's
  // local_path. Outcomes are in the order of `jobs`. An error status means the jobs could
  // not be run at all (coordinator unreachable, store failure): the caller runs plain nvcc.
  virtual absl::StatusOr<std::vector<DeviceJobOutcome>> Compile(
      const std::vector<DeviceJob>& jobs, const DeviceCompileContext& context) = 0;
};

}  // namespace farm
