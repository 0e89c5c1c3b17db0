// build.bazel.remote.execution.v2.ContentAddressableStorage over the farm's own CAS (one
// store, one quota, one accounting with farm.v1.CasService): FindMissingBlobs,
// BatchUpdateBlobs and BatchReadBlobs. Each blob's outcome is its own status, as the spec
// asks; a whole call fails only when it is malformed (instance, digest function) or over the
// batch limit GetCapabilities advertises. Uploaded bytes are re-hashed before they are
// stored. GetTree streams a tree's Directory messages breadth first, in pages whose tokens
// resume the walk; a missing subtree is left out, a missing root is NOT_FOUND.
#pragma once

#include "build/bazel/remote/execution/v2/remote_execution.grpc.pb.h"
#include "coordinator/cas/blob_store.h"
#include "coordinator/cas/cas_traffic.h"
#include "coordinator/rpc_gate.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator::reapi {

class ContentAddressableStorageService final
    : public build::bazel::remote::execution::v2::ContentAddressableStorage::Service {
 public:
  ContentAddressableStorageService(const RpcGate* gate, BlobStore* store, MetricsRegistry* metrics);

  grpc::Status FindMissingBlobs(
      grpc::ServerContext* context,
      const build::bazel::remote::execution::v2::FindMissingBlobsRequest* request,
      build::bazel::remote::execution::v2::FindMissingBlobsResponse* response) override;
  grpc::Status BatchUpdateBlobs(
      grpc::ServerContext* context,
      const build::bazel::remote::execution::v2::BatchUpdateBlobsRequest* request,
      build::bazel::remote::execution::v2::BatchUpdateBlobsResponse* response) override;
  grpc::Status BatchReadBlobs(
      grpc::ServerContext* context,
      const build::bazel::remote::execution::v2::BatchReadBlobsRequest* request,
      build::bazel::remote::execution::v2::BatchReadBlobsResponse* response) override;
  grpc::Status GetTree(
      grpc::ServerContext* context,
      const build::bazel::remote::execution::v2::GetTreeRequest* request,
      grpc::ServerWriter<build::bazel::remote::execution::v2::GetTreeResponse>* writer) override;

 private:
  absl::Status SendTree(
      grpc::ServerContext* context,
      const build::bazel::remote::execution::v2::GetTreeRequest& request,
      grpc::ServerWriter<build::bazel::remote::execution::v2::GetTreeResponse>* writer);
  // One blob of BatchUpdateBlobs: stored, or why not.
  absl::Status StoreBlob(const build::bazel::remote::execution::v2::Digest& digest,
                         const std::string& data);

  const RpcGate* gate_;
  BlobStore* store_;
  CasTraffic traffic_;
};

}  // namespace farm::coordinator::reapi
