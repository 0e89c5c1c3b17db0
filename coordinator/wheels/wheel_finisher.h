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
#include "coordinator/index/package_index.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/publish/publisher.h"

namespace farm::coordinator {

class WheelFinisher {
 public:
  // `work_dir`: where retagged wheels are written (<data-dir>/wheels).
  WheelFinisher(BuildRegistry* builds, PackageIndex* index, std::string work_dir);

  // Runs verifying -> publishing -> succeeded on build `id`, whose host built the wheel
  // `filename` (as the host named it, checked here), stored at `blob_path`. On any failure
  // the build ends FAILED with the reason; the returned status is for the caller's log.
  absl::Status Finish(const std::string& id, const farm::v1::BuildPlan& plan,
                      const std::string& blob_path, const std::string& filename);

  // The publisher for one of a plan's targets.
  absl::StatusOr<std::unique_ptr<Publisher>> PublisherFor(
      const farm::v1::RecipePublishTarget& target) const;

 private:
  absl::Status Fail(const std::string& id, const std::string& reason);

  BuildRegistry* const builds_;
  PackageIndex* const index_;
  const std::string work_dir_;
};

}  // namespace farm::coordinator
