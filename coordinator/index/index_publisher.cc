#include "coordinator/index/index_publisher.h"

namespace farm::coordinator {

absl::StatusOr<PublishResult> BuiltinIndexPublisher::Publish(const std::string& wheel_path) {
  auto published = index_->Publish(wheel_path);
  if (!published.ok()) {
    if (published.status().code() == absl::StatusCode::kAlreadyExists) {
      return absl::FailedPreconditionError(published.status().message());
    }
    return published.status();
  }
  return PublishResult{.location = published->url,
                       .already_present = published->already_present,
                       .detail = published->project_url};
}

}  // namespace farm::coordinator
