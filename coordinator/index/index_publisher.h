// The built-in index as a Publisher target, for the submit flow: publishes in process,
// no HTTP round trip, and reports the file's URL.
#pragma once

#include "coordinator/index/package_index.h"
#include "libfarm/publish/publisher.h"

namespace farm::coordinator {

class BuiltinIndexPublisher : public Publisher {
 public:
  explicit BuiltinIndexPublisher(PackageIndex* index) : index_(index) {}

  std::string Describe() const override { return "the coordinator's built-in index"; }
  // A different file of the same name already listed is FAILED_PRECONDITION (Publisher's
  // contract); identical bytes are success with already_present.
  absl::StatusOr<PublishResult> Publish(const std::string& wheel_path) override;

 private:
  PackageIndex* const index_;
};

}  // namespace farm::coordinator
