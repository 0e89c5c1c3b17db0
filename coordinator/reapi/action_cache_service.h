// build.bazel.remote.execution.v2.ActionCache: clients' ActionResults by action digest, kept
// in the coordinator's RocksDB (Table::kReapiActionCache), apart from the farm's own action
// cache. A result is served only while every blob it names is in the farm's CAS (the
// completeness check the spec recommends, as bazel-remote and Buildbarn do), so a hit never
// sends a client after an evicted blob. A new result must name blobs the CAS holds, relative
// paths without '.' or '..', and fit kMaxActionResultBytes; nothing is stored otherwise. Who
// may write is the gate's rule (ActionCache.UpdateActionResult's row and its grants).
#pragma once

#include <cstddef>

#include "build/bazel/remote/execution/v2/remote_execution.grpc.pb.h"
#include "coordinator/cas/blob_store.h"
#include "coordinator/rpc_gate.h"
#include "coordinator/state_store.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator::reapi {

// The largest ActionResult stored, serialized: paths and digests of many outputs, with room
// for a small inlined stdout/stderr; bigger logs belong in the CAS (stdout_digest).
inline constexpr size_t kMaxActionResultBytes = 1 << 20;

class ActionCacheService final : public build::bazel::remote::execution::v2::ActionCache::Service {
 public:
  // None owned; all outlive the service.
  ActionCacheService(const RpcGate* gate, StateStore* state, BlobStore* blobs,
                     MetricsRegistry* metrics);

  grpc::Status GetActionResult(
      grpc::ServerContext* context,
      const build::bazel::remote::execution::v2::GetActionResultRequest* request,
      build::bazel::remote::execution::v2::ActionResult* response) override;
  grpc::Status UpdateActionResult(
      grpc::ServerContext* context,
      const build::bazel::remote::execution::v2::UpdateActionResultRequest* request,
      build::bazel::remote::execution::v2::ActionResult* response) override;

 private:
  absl::Status Lookup(const build::bazel::remote::execution::v2::GetActionResultRequest& request,
                      build::bazel::remote::execution::v2::ActionResult* response);
  absl::Status Store(const build::bazel::remote::execution::v2::UpdateActionResultRequest& request,
                     build::bazel::remote::execution::v2::ActionResult* response);
  // OK when every blob `result` names is stored (an output directory's Tree and the files in
  // it included); else NOT_FOUND naming the first one missing. Marks each blob found as used.
  absl::Status CheckComplete(const build::bazel::remote::execution::v2::ActionResult& result);

  const RpcGate* gate_;
  StateStore* state_;
  BlobStore* blobs_;
  Counter* hits_;
  Counter* misses_;
  Counter* incomplete_;
  Counter* updates_;
};

}  // namespace farm::coordinator::reapi
