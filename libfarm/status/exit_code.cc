#include "libfarm/status/exit_code.h"

namespace farm {

int ExitCodeForStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kFailedPrecondition:
      return kExitConfig;
    case absl::StatusCode::kUnauthenticated:
      return kExitUnauthenticated;
    default:
      return kExitFailure;
  }
}

}  // namespace farm
