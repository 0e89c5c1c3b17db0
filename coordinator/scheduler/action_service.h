// farm.v1.ActionService: clients (farm-nvcc, builds) run actions on the farm.
#pragma once

#include "coordinator/builds/build_registry.h"
#include "coordinator/compile_cache/compile_result_table.h"
#include "coordinator/rpc_gate.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/scheduler/wait_pool.h"
#include "farm/v1/actions.grpc.pb.h"

namespace farm::coordinator {

// Wait is a callback method: a waiting launcher holds no server thread (wait_pool.h).
class ActionServiceImpl final
    : public farm::v1::ActionService::WithCallbackMethod_Wait<farm::v1::ActionService::Service> {
 public:
  // `builds` says whose build a build token's is, which scopes its compile cache entries.
  ActionServiceImpl(const RpcGate* gate, Scheduler* scheduler, CompileResultTable* compile_results,
                    const BuildRegistry* builds);
  // Answers every open Wait with the statuses it has: before the gRPC server stops.
  void StopWaits() { waits_.Stop(); }

  grpc::Status Execute(grpc::ServerContext* context, const farm::v1::ExecuteRequest* request,
                       farm::v1::ExecuteResponse* response) override;
  grpc::ServerUnaryReactor* Wait(grpc::CallbackServerContext* context,
                                 const farm::v1::WaitRequest* request,
                                 farm::v1::WaitResponse* response) override;
  grpc::Status Get(grpc::ServerContext* context, const farm::v1::GetActionRequest* request,
                   farm::v1::ActionStatus* response) override;
  grpc::Status Cancel(grpc::ServerContext* context, const farm::v1::CancelActionRequest* request,
                      farm::v1::ActionStatus* response) override;
  grpc::Status GetExpectedCosts(grpc::ServerContext* context,
                                const farm::v1::GetExpectedCostsRequest* request,
                                farm::v1::GetExpectedCostsResponse* response) override;
  grpc::Status GetCompileResult(grpc::ServerContext* context,
                                const farm::v1::GetCompileResultRequest* request,
                                farm::v1::CompileResult* response) override;
  grpc::Status PutCompileResult(grpc::ServerContext* context,
                                const farm::v1::PutCompileResultRequest* request,
                                farm::v1::PutCompileResultResponse* response) override;

 private:
  // OK unless `caller` holds a build token and action `id` belongs to another build.
  absl::Status CheckActionScope(const Caller& caller, const std::string& id) const;

  const RpcGate* gate_;
  Scheduler* scheduler_;
  CompileResultTable* compile_results_;
  const BuildRegistry* builds_;
  WaitPool waits_;
};

}  // namespace farm::coordinator
