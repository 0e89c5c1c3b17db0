// google.bytestream.ByteStream over the farm's CAS, as REAPI uses it for blobs larger than a
// batch: Read streams a stored blob in 1 MiB chunks (read_offset, read_limit), Write receives
// one into a temp file of the store, refusing it as soon as it outgrows its digest's size and
// storing it only once its bytes hash to the digest, and QueryWriteStatus says whether a blob
// is complete. Partial uploads are not kept: an interrupted Write starts again at offset 0.
// Resource names are parsed strictly (resource_name.h).
#pragma once

#include "coordinator/cas/blob_store.h"
#include "coordinator/cas/cas_traffic.h"
#include "coordinator/rpc_gate.h"
#include "google/bytestream/bytestream.grpc.pb.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator::reapi {

class ByteStreamService final : public google::bytestream::ByteStream::Service {
 public:
  ByteStreamService(const RpcGate* gate, BlobStore* store, MetricsRegistry* metrics);

  grpc::Status Read(grpc::ServerContext* context, const google::bytestream::ReadRequest* request,
                    grpc::ServerWriter<google::bytestream::ReadResponse>* writer) override;
  grpc::Status Write(grpc::ServerContext* context,
                     grpc::ServerReader<google::bytestream::WriteRequest>* reader,
                     google::bytestream::WriteResponse* response) override;
  grpc::Status QueryWriteStatus(grpc::ServerContext* context,
                                const google::bytestream::QueryWriteStatusRequest* request,
                                google::bytestream::QueryWriteStatusResponse* response) override;

 private:
  absl::Status SendBlob(grpc::ServerContext* context,
                        const google::bytestream::ReadRequest& request,
                        grpc::ServerWriter<google::bytestream::ReadResponse>* writer);
  absl::Status ReceiveBlob(grpc::ServerContext* context,
                           grpc::ServerReader<google::bytestream::WriteRequest>* reader,
                           google::bytestream::WriteResponse* response);

  const RpcGate* gate_;
  BlobStore* store_;
  CasTraffic traffic_;
};

}  // namespace farm::coordinator::reapi
