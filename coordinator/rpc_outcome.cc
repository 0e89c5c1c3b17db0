#include "coordinator/rpc_outcome.h"

#include "libfarm/disk/disk_space.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/grpc_status.h"

namespace farm::coordinator {

grpc::Status FinishRpc(MetricsRegistry& metrics, const char* method, const absl::Status& status) {
  metrics
      .GetCounter("farm_rpc_requests_total", "gRPC requests handled, by method and status code.",
                  {{"method", method}, {"code", absl::StatusCodeToString(status.code())}})
      ->Increment();
  // A full disk fails every upload: the operator hears of it, with the path, once a minute.
  static DiskFullReporter* const disk_full =
      new DiskFullReporter(ComponentLogger("coordinator"), absl::Minutes(1));
  disk_full->Report(status);
  return ToGrpcStatus(status);
}

}  // namespace farm::coordinator
