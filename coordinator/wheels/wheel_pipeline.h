// The wheel pipeline behind `farmctl submit`: plans a build, queues the recipe on a build
// host as one action (whose device compiles fan out as arch shards through farm-nvcc),
// follows it through building, then hands the wheel to the WheelFinisher.
//
// Durable by construction: the build record (with its plan and the host action's id) and
// the action live in RocksDB, so a restarted coordinator picks every unfinished build up
// where it was; the host keeps building through the outage and reports when it is back.
#pragma once

#include <set>
#include <string>
#include <thread>

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

 private:
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
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace farm::coordinator
