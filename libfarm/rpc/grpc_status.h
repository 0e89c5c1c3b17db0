// Conversions between absl::Status and grpc::Status. The codes map 1:1.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace farm {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace farm
