// farm.v1.FarmService: the client-facing API (farmctl, farm-nvcc, dashboard).
#pragma once

#include <string>

#include "absl/time/time.h"
#include "coordinator/farm_status_source.h"
#include "coordinator/rpc_gate.h"
#include "coordinator/workers/worker_registry.h"
#include "farm/v1/farm_service.grpc.pb.h"

namespace farm::coordinator {

struct CoordinatorIdentity {
  std::string version;
  absl::Time started_at;
  std::string grpc_address;
  std::string http_address;
  bool tls = false;  // gRPC and HTTP speak TLS (HTTP as https://)
};

class FarmServiceImpl final : public farm::v1::FarmService::Service, public FarmStatusSource {
 public:
  FarmServiceImpl(const RpcGate* gate, const WorkerRegistry* registry,
                  const CoordinatorIdentity* identity);

  grpc::Status GetStatus(grpc::ServerContext* context, const farm::v1::GetStatusRequest* request,
                         farm::v1::GetStatusResponse* response) override;
  grpc::Status ListWorkers(grpc::ServerContext* context,
                           const farm::v1::ListWorkersRequest* request,
                           farm::v1::ListWorkersResponse* response) override;

  // The answers without the RPC, for the JSON API (which must say the same).
  farm::v1::GetStatusResponse Status() const override;
  farm::v1::ListWorkersResponse Workers() const override;

 private:
  const RpcGate* gate_;
  const WorkerRegistry* registry_;
  const CoordinatorIdentity* identity_;
};

}  // namespace farm::coordinator
