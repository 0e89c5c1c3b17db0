// build.bazel.remote.execution.v2.Capabilities: what a REAPI client asks first. The farm
// answers as a cache-only endpoint for now: SHA256, no compressors, the batch limit its gRPC
// message limit leaves room for, action-cache updates enabled exactly when the calling
// token's role may call UpdateActionResult, no execution capabilities, and
// API 2.0 only (the newer minor versions commit a server to fields this slice does not
// serve: output_paths and output_symlinks from 2.1, Action.platform from 2.2).
#pragma once

#include <cstdint>

#include "build/bazel/remote/execution/v2/remote_execution.grpc.pb.h"
#include "coordinator/rpc_gate.h"

namespace farm::coordinator::reapi {

// Blob bytes a BatchUpdateBlobs or BatchReadBlobs call may carry: the coordinator's message
// limit (kCasMaxMessageBytes) less a chunk's worth for the requests' framing and digests.
int64_t MaxBatchTotalSizeBytes();
// Digests a batch call may name, which bounds that framing (~100 bytes a blob).
inline constexpr int kMaxBatchBlobs = 10000;

class CapabilitiesService final
    : public build::bazel::remote::execution::v2::Capabilities::Service {
 public:
  explicit CapabilitiesService(const RpcGate* gate) : gate_(gate) {}

  grpc::Status GetCapabilities(
      grpc::ServerContext* context,
      const build::bazel::remote::execution::v2::GetCapabilitiesRequest* request,
      build::bazel::remote::execution::v2::ServerCapabilities* response) override;

 private:
  const RpcGate* gate_;
};

}  // namespace farm::coordinator::reapi
