// farmctl admin backup: an online backup streamed to the operator's machine. The state store
// is checkpointed (consistent, while the coordinator serves) with every CAS blob pinned, so
// what the checkpoint records of the CAS is exactly what the stream carries.
#pragma once

#include "coordinator/cas/blob_store.h"
#include "coordinator/rpc_gate.h"
#include "coordinator/state_store.h"
#include "farm/v1/admin_service.grpc.pb.h"

namespace farm::coordinator {

class BackupServiceImpl final : public farm::v1::AdminService::Service {
 public:
  // `scratch_dir`: where checkpoints are made (on the state store's filesystem, so table
  // files are hard links rather than copies); each is removed once sent.
  BackupServiceImpl(const RpcGate* gate, const StateStore* state, BlobStore* blobs,
                    std::string scratch_dir);

  grpc::Status Backup(grpc::ServerContext* context, const farm::v1::BackupRequest* request,
                      grpc::ServerWriter<farm::v1::BackupChunk>* writer) override;

 private:
  absl::Status Stream(grpc::ServerContext* context,
                      grpc::ServerWriter<farm::v1::BackupChunk>* writer);

  const RpcGate* gate_;
  const StateStore* state_;
  BlobStore* blobs_;
  const std::string scratch_dir_;
};

}  // namespace farm::coordinator
