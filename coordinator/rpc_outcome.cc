#include "coordinator/rpc_outcome.h"

#include "libfarm/status/grpc_status.h"

namespace farm::coordinator {

grpc::Status FinishRpc(MetricsRegistry& metrics, const char* method, const absl::Status& status) {
  metrics
      .GetCounter("farm_rpc_requests_total", "gRPC requests handled, by method and status code.",
                  {{"method", method}, {"code", absl::StatusCodeToString(status.code())}})
      ->Increment();
  return ToGrpcStatus(status);
}

}  // namespace farm::coordinator
