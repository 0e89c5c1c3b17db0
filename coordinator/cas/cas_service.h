// farm.v1.CasService: clients and workers upload, find, stat and download blobs. Every
// upload is re-hashed here (a client's digest is a claim, not a fact), a mismatch is refused
// naming both digests, and no partial blob is ever kept. Blobs stream in 1 MiB chunks in
// both directions, zstd-compressed when the peer asks, so memory per call stays constant.
#pragma once

#include "coordinator/cas/blob_store.h"
#include "coordinator/cas/cas_traffic.h"
#include "coordinator/rpc_gate.h"
#include "farm/v1/cas.grpc.pb.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator {

class CasServiceImpl final : public farm::v1::CasService::Service {
 public:
  CasServiceImpl(const RpcGate* gate, BlobStore* store, MetricsRegistry* metrics);

  grpc::Status FindMissing(grpc::ServerContext* context,
                           const farm::v1::FindMissingRequest* request,
                           farm::v1::FindMissingResponse* response) override;
  grpc::Status Upload(grpc::ServerContext* context,
                      grpc::ServerReader<farm::v1::UploadRequest>* reader,
                      farm::v1::UploadResponse* response) override;
  grpc::Status Download(grpc::ServerContext* context, const farm::v1::DownloadRequest* request,
                        grpc::ServerWriter<farm::v1::DownloadResponse>* writer) override;
  grpc::Status Stat(grpc::ServerContext* context, const farm::v1::StatRequest* request,
                    farm::v1::StatResponse* response) override;

 private:
  absl::Status ReceiveUpload(grpc::ServerContext* context,
                             grpc::ServerReader<farm::v1::UploadRequest>* reader,
                             farm::v1::UploadResponse* response);
  absl::Status SendBlob(grpc::ServerContext* context, const farm::v1::DownloadRequest& request,
                        grpc::ServerWriter<farm::v1::DownloadResponse>* writer);

  const RpcGate* gate_;
  BlobStore* store_;
  CasTraffic traffic_;
};

}  // namespace farm::coordinator
