// The end of a wheel build, once the build host returned its wheel: retag it (+cuXY,
// manylinux from its real glibc floor), verify it against the requested archs and the
// recipe's policy, and publish it to the plan's targets. A wheel that fails verification is
// never published. Each step is recorded on the build (state, wheel, verification,
// published locations), and the whole is safe to run again after a coordinator restart:
// publishing the same bytes twice is success.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "coordinator/builds/build_registry.h"
#include "coordinator/cas/blob_store.h"
#include "coordinator/index/package_index.h"
#include "coordinator/wheels/smoke_stage.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/publish/publisher.h"

namespace farm::coordinator {

class WheelFinisher {
 public:
  // `work_dir`: where retagged wheels are written (<data-dir>/wheels). With `smoke` (and
  // `blobs`, where a wheel waits for its smoke tests), a plan with a [smoke] recipe is smoke
  // tested between verifying and publishing.
  WheelFinisher(BuildRegistry* builds, PackageIndex* index, std::string work_dir,
                BlobStore* blobs = nullptr, SmokeStage* smoke = nullptr);

  // Runs verifying -> publishing -> succeeded on build `id`, whose host built the wheel
  // `filename` (as the host named it, checked here), stored at `blob_path`. On any failure
  // the build ends FAILED with the reason; the returned status is for the caller's log.
  absl::Status Finish(const std::string& id, const farm::v1::BuildPlan& plan,
                      const std::string& blob_path, const std::string& filename);

  // For a build whose smoke tests were started (Build.smoke set): follows them and, once each
  // SM has its result, applies the recipe's policy: publishes the verified wheel, marked
  // where a test failed with on_failure = "mark", or fails the build.
  absl::Status FollowSmoke(const std::string& id, const farm::v1::BuildPlan& plan);

  // Build `id` was cancelled: its smoke tests stop waiting for GPU workers, and its wheel is
  // no longer kept for them.
  void CancelSmoke(const std::string& id);

  // After a coordinator restart, before the pipeline follows anything: a build smoke testing
  // its wheel keeps it in the CAS again (pins live in memory), so that no upload meanwhile
  // evicts what a test placed again needs.
  void ResumeSmoke(const farm::v1::Build& build);

  // The publisher for one of a plan's targets.
  absl::StatusOr<std::unique_ptr<Publisher>> PublisherFor(
      const farm::v1::RecipePublishTarget& target) const;

 private:
  absl::Status Fail(const std::string& id, const std::string& reason);
  // publishing -> succeeded: the verified wheel at `path` to each of the plan's targets.
  // `note` ends the final reason (smoke test problems that only mark the build).
  absl::Status Publish(const std::string& id, const farm::v1::BuildPlan& plan,
                       const std::string& path, const std::string& filename,
                       farm::v1::BuildState state_before, const std::string& note);
  std::string SmokePinOwner(const std::string& id) const { return id + "/smoke"; }
  // Pins `wheel` for build `id`'s smoke tests while the build runs: false (and nothing
  // pinned) once it is over, cancelled meanwhile.
  bool KeepWheelForSmoke(const std::string& id, const farm::v1::Digest& wheel);

  BuildRegistry* const builds_;
  PackageIndex* const index_;
  const std::string work_dir_;
  BlobStore* const blobs_;
  SmokeStage* const smoke_;
};

}  // namespace farm::coordinator
