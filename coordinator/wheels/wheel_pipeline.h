// The wheel pipeline behind `farmctl submit`: plans a build, queues the recipe on a build
// host as one action (whose device compiles fan out as arch shards through farm-nvcc),
// follows it through building, then hands the wheel to the WheelFinisher.
//
// A stack (`farmctl submit A B C`, SubmitBuildRequest.stack) is planned whole before anything
// is queued, in dependency order (farm_requirements between its packages; otherwise as
// given): one refusal refuses it all. Each package is one build; a build that installs an
// earlier one's wheel keeps its host action in its record (Build.waiting_action) and is
// queued once those builds succeeded, i.e. published to the index it installs from; when one
// fails or is cancelled it fails, "not built", and so do its own dependents. Each build
// publishes when it is verified: the stack's wheels land in one arch-set index, and a failure
// takes back nothing another build of the stack published.
//
// Durable by construction: the build record (with its plan and the host action's id) and
// the action live in RocksDB, so a restarted coordinator picks every unfinished build up
// where it was; the host keeps building through the outage and reports when it is back.
#pragma once

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "coordinator/builds/build_registry.h"
#include "coordinator/builds/build_service.h"
#include "coordinator/cas/blob_store.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/wheels/wheel_finisher.h"
#include "coordinator/workers/worker_registry.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/recipes/recipe_loader.h"

namespace farm::coordinator {

class WheelPipeline final : public WheelSubmitter {
 public:
  WheelPipeline(BuildRegistry* builds, Scheduler* scheduler, WorkerRegistry* workers,
                BlobStore* blobs, const RecipeDirectory* recipes, WheelFinisher* finisher);
  ~WheelPipeline() override;

  // Resumes the unfinished wheel builds and starts following them.
  void Start();
  void Stop();

  absl::StatusOr<farm::v1::SubmitBuildResponse> Submit(
      const farm::v1::SubmitBuildRequest& request,
      const farm::v1::Submitter& submitted_by) override;
  absl::StatusOr<farm::v1::Build> Cancel(const std::string& build_id) override;

  // The coordinator's HTTP base URL ("http://127.0.0.1:7421"), once bound: where build hosts
  // install farm wheels from. Unset: recipes with farm_requirements are refused.
  void SetIndexUrl(const std::string& url);

 private:
  struct Member;  // one package of a submit, planned
  // Plans `ref` (PlanWheelBuild, its build dependencies, the name rule, its source: `upload`
  // when --source sent one for it, else the recipe's) after the stack's `earlier` packages.
  absl::StatusOr<Member> PlanMember(const std::string& ref,
                                    const farm::v1::SubmitBuildRequest& request,
                                    const farm::v1::SourceUpload* upload,
                                    const std::vector<Member>& earlier,
                                    const std::vector<farm::v1::Build>& builds);
  // Creates the build and queues its host action, or keeps it waiting for `depends_on`.
  absl::StatusOr<farm::v1::Build> Queue(Member& member, const farm::v1::Submitter& submitted_by,
                                        const std::string& stack_id,
                                        const std::vector<std::string>& depends_on);
  absl::StatusOr<farm::v1::SubmitBuildResponse> SubmitStack(
      const farm::v1::SubmitBuildRequest& request, const farm::v1::Submitter& submitted_by);
  // A stack build waiting for its dependencies: queues it once they all succeeded, fails it
  // when one did not.
  void StartWhenReady(const farm::v1::Build& build);
  // Hands the host action to the scheduler and records it on build `id`.
  absl::Status QueueHostAction(const std::string& id, farm::v1::Action action,
                               const farm::v1::BuildPlan& plan);
  std::string IndexUrl();

  void Loop();
  // One look at build `id`: advances its state from its host action's.
  void Advance(const std::string& id);

  BuildRegistry* const builds_;
  Scheduler* const scheduler_;
  WorkerRegistry* const workers_;
  BlobStore* const blobs_;
  const RecipeDirectory* const recipes_;
  WheelFinisher* const finisher_;

  absl::Mutex mu_;
  std::set<std::string> active_ ABSL_GUARDED_BY(mu_);  // unfinished wheel builds
  std::string index_url_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace farm::coordinator
