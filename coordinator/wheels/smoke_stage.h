// The smoke stage of a wheel build (a recipe's [smoke]): after verification, the wheel is
// installed and its smoke command run on a GPU of each requested SM, on an online worker that
// has one (or one the SM's code runs on: sm_120 SASS on a 12.1 GPU, PTX on a newer one). Each
// SM's result (passed, failed with the command's output, or not run and why) is kept on the
// build, and its output in the build log; the recipe's policy then decides whether the wheel
// is published.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/builds/build_registry.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/workers/worker_registry.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/cuda/arch_list.h"

namespace farm::coordinator {

inline constexpr char kSmokePassed[] = "passed";
inline constexpr char kSmokeFailed[] = "failed";
inline constexpr char kSmokeNotRun[] = "not run";
inline constexpr char kSmokeQueued[] = "queued";
inline constexpr char kSmokeRunning[] = "running";

// Which GPU tests each arch of the wheel: one of an online worker with python{python} and the
// wheel's CPU arch, of the exact SM, else the oldest the arch's SASS (or, with +PTX, its PTX)
// runs on. An arch no such GPU serves is "not run" with the reason.
std::vector<farm::v1::SmokeResult> PlaceSmokeTests(const ArchList& archs,
                                                   const std::vector<farm::v1::Worker>& online,
                                                   const std::string& python,
                                                   const std::string& cpu_arch);

// Whether the results let the wheel be published: OK, or why not (a failed test with
// on_failure = "block", an SM not tested with require_gpu). `marked` gets the problems that
// only mark the build.
absl::Status SmokeVerdict(const farm::v1::RecipeSmoke& smoke,
                          const std::vector<farm::v1::SmokeResult>& results,
                          std::vector<std::string>* marked);

// "sm_90 passed on w1; sm_75 not run: no online GPU worker runs sm_75".
std::string SmokeSummary(const google::protobuf::RepeatedPtrField<farm::v1::SmokeResult>& results);

class SmokeStage {
 public:
  // `index_url`: the farm's own package index ("http://host:port/simple/"), "" when none.
  SmokeStage(BuildRegistry* builds, Scheduler* scheduler, WorkerRegistry* workers,
             std::function<std::string()> index_url);

  // Queues build `id`'s smoke tests of its verified wheel `filename`, in the CAS as `wheel`,
  // and records the results (queued or not run). The wheel must stay pinned until Finished.
  absl::Status Start(const std::string& id, const farm::v1::BuildPlan& plan,
                     const farm::v1::Digest& wheel, const std::string& filename);

  // Follows the queued tests and records what finished (output in the build log). True once
  // every SM has its result.
  absl::StatusOr<bool> Advance(const std::string& id);

 private:
  BuildRegistry* const builds_;
  Scheduler* const scheduler_;
  WorkerRegistry* const workers_;
  const std::function<std::string()> index_url_;
};

}  // namespace farm::coordinator
