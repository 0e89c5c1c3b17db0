#include "libfarm/rpc/grpc_status.h"

#include <string>

#include "libfarm/rpc/request_limits.h"

namespace farm {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // Cut: an error longer than gRPC's metadata limit would reach the client as a transport
  // error ("metadata size exceeds limit") instead of what went wrong.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      BoundedErrorMessage(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

}  // namespace farm
