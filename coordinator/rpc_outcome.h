// Counts each handled RPC by method and status code, then converts the status for gRPC.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator {

grpc::Status FinishRpc(MetricsRegistry& metrics, const char* method, const absl::Status& status);

}  // namespace farm::coordinator
