// farm.v1.WorkerService: how worker daemons register and stay alive.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include "coordinator/rpc_gate.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/tokens/token_store.h"
#include "coordinator/workers/worker_registry.h"
#include "farm/v1/worker_service.grpc.pb.h"

namespace farm::coordinator {

// Register reads its request itself (a raw callback method): protobuf refuses a request whose
// text is not UTF-8 before any handler runs, and gRPC answers that INTERNAL with no word on
// why; this one names the field and the fix.
class WorkerServiceImpl final : public farm::v1::WorkerService::WithRawCallbackMethod_Register<
                                    farm::v1::WorkerService::Service> {
 public:
  // `scheduler` may be null in tests that only exercise registration. `build_tokens` (may
  // be null: wheel-build leases then carry no token) issues each leased wheel build the token
  // its build host and farm-nvcc use.
  WorkerServiceImpl(const RpcGate* gate, WorkerRegistry* registry, Scheduler* scheduler,
                    TokenStore* build_tokens = nullptr);

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const farm::v1::HeartbeatRequest* request,
                         farm::v1::HeartbeatResponse* response) override;
  grpc::Status Leave(grpc::ServerContext* context, const farm::v1::LeaveRequest* request,
                     farm::v1::LeaveResponse* response) override;
  grpc::Status LeaseActions(grpc::ServerContext* context,
                            const farm::v1::LeaseActionsRequest* request,
                            farm::v1::LeaseActionsResponse* response) override;
  grpc::Status CompleteActions(grpc::ServerContext* context,
                               const farm::v1::CompleteActionsRequest* request,
                               farm::v1::CompleteActionsResponse* response) override;

 private:
  uint32_t HeartbeatIntervalMs() const;
  // Register's body, for a request read whole.
  absl::Status RegisterWorker(const grpc::ServerContextBase& context,
                              const farm::v1::RegisterRequest& request, const Caller& caller,
                              farm::v1::RegisterResponse* response);

  const RpcGate* gate_;
  WorkerRegistry* registry_;
  Scheduler* scheduler_;
  TokenStore* build_tokens_;
};

// Worker names are keys and appear in paths and logs: 1-64 of [A-Za-z0-9._-].
absl::Status ValidateWorkerName(const std::string& name);

}  // namespace farm::coordinator
