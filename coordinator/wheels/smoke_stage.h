// The smoke stage of a wheel build (a recipe's [smoke]): after verification, the wheel is
// installed and its smoke command run on a GPU of each requested SM, on an online worker that
// has one (or one the SM's code runs on: sm_120 SASS on a 12.1 GPU, PTX on a newer one). Each
// SM's result (passed, failed with the command's output, or not run and why) is kept on the
// build, and its output in the build log; the recipe's policy then decides whether the wheel
// is published. With require_gpu, an SM no online GPU worker runs waits for one (up to the
// recipe's gpu_wait): Advance looks for it among the online workers each time it is called.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/builds/build_registry.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/workers/worker_registry.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/recipes/recipe.h"

namespace farm::coordinator {

inline constexpr char kSmokePassed[] = "passed";
inline constexpr char kSmokeFailed[] = "failed";
inline constexpr char kSmokeNotRun[] = "not run";
inline constexpr char kSmokeQueued[] = "queued";
inline constexpr char kSmokeRunning[] = "running";
// require_gpu: no online GPU worker runs the SM yet (SmokeResult.waiting_since says since when).
inline constexpr char kSmokeWaiting[] = "waiting";

// Which GPU tests each arch of the wheel: one of an online worker with python{python} and the
// wheel's CPU arch, of the exact SM, else the oldest the arch's SASS (or, with +PTX, its PTX)
// runs on. An arch no such GPU serves is "not run" with the reason, or with `wait_for_gpu`
// (require_gpu) "waiting" with what it waits for.
std::vector<farm::v1::SmokeResult> PlaceSmokeTests(const ArchList& archs,
                                                   const std::vector<farm::v1::Worker>& online,
                                                   const std::string& python,
                                                   const std::string& cpu_arch,
                                                   bool wait_for_gpu = false);

// How long require_gpu waits for a GPU worker: the recipe's gpu_wait, else kDefaultGpuWait.
absl::Duration GpuWait(const farm::v1::RecipeSmoke& smoke);

// Ends the wait of a "waiting" result that has waited GpuWait(smoke) by `now`: it becomes
// "not run", saying how long it waited and for what. True when it did.
bool EndOverdueWait(const farm::v1::RecipeSmoke& smoke, absl::Time now,
                    farm::v1::SmokeResult* result);

// Whether the results let the wheel be published: OK, or why not (a failed test with
// on_failure = "block", an SM not tested with require_gpu, with the fix). `marked` gets the
// problems that only mark the build.
absl::Status SmokeVerdict(const farm::v1::RecipeSmoke& smoke,
                          const std::vector<farm::v1::SmokeResult>& results,
                          std::vector<std::string>* marked);

// "sm_90 passed on w1; sm_75 not run: no online GPU worker runs sm_75" ("sm_80 waiting for a
// GPU worker that runs sm_80 (...)").
std::string SmokeSummary(const google::protobuf::RepeatedPtrField<farm::v1::SmokeResult>& results);

class SmokeStage {
 public:
  // `index_url`: the farm's own package index ("http://host:port/simple/"), "" when none.
  SmokeStage(BuildRegistry* builds, Scheduler* scheduler, WorkerRegistry* workers,
             std::function<std::string()> index_url, std::function<absl::Time()> clock = absl::Now);

  // Queues build `id`'s smoke tests of its verified wheel `filename`, in the CAS as `wheel`,
  // and records the results (queued, waiting or not run). The wheel must stay pinned until
  // Finished.
  absl::Status Start(const std::string& id, const farm::v1::BuildPlan& plan,
                     const farm::v1::Digest& wheel, const std::string& filename);

  // Follows the queued tests and records what finished (output in the build log); queues a
  // waiting SM's test once an online GPU worker runs it, or ends its wait when it is overdue;
  // places a test again whose action is gone (lost across a restart). True once every SM has
  // its result.
  absl::StatusOr<bool> Advance(const std::string& id);

  // The build was cancelled: its waiting SMs stop waiting ("not run", `why`).
  absl::Status EndWaits(const std::string& id, const std::string& why);

  // The SMs that wait for a GPU worker, "sm_75, sm_80", or "" when none does.
  static std::string WaitingSms(
      const google::protobuf::RepeatedPtrField<farm::v1::SmokeResult>& results);

 private:
  // Starts `r`, as PlaceSmokeTests placed it: queues its test, or records since when it waits
  // for a GPU worker, or why it is not run; in the build's log.
  void Begin(const std::string& id, const farm::v1::BuildPlan& plan, const farm::v1::Digest& wheel,
             const std::string& filename, farm::v1::SmokeResult& r);

  // `r`'s action is `gone` (its record left the store): its test is placed again among the
  // workers online now and begun, as at Start.
  void PlaceAgain(const farm::v1::Build& build, farm::v1::SmokeResult& r, const absl::Status& gone);

  // Queues `r`'s test (r.gpu_sm() placed) of the build's wheel: "queued" with its action, or
  // "not run" when the scheduler refused it.
  void Queue(const std::string& id, const farm::v1::BuildPlan& plan, const farm::v1::Digest& wheel,
             const std::string& filename, farm::v1::SmokeResult& r);

  // Queues each waiting SM of `build` (in `results`) that an online GPU worker runs now, and
  // ends the waits that are over; `done` false while any SM still waits.
  void PlaceWaiting(const farm::v1::Build& build, std::vector<farm::v1::SmokeResult>& results,
                    bool* changed, bool* done);

  BuildRegistry* const builds_;
  Scheduler* const scheduler_;
  WorkerRegistry* const workers_;
  const std::function<std::string()> index_url_;
  const std::function<absl::Time()> clock_;
  // Advance and EndWaits, one at a time: a cancelled build's waiting SM is not queued after
  // its wait was ended.
  absl::Mutex mu_;
};

}  // namespace farm::coordinator
