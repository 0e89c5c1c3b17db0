// farm.v1.ActionService: clients (farm-nvcc, builds) run actions on the farm.
#pragma once

#include "coordinator/compile_cache/compile_result_table.h"
#include "coordinator/rpc_gate.h"
#include "coordinator/scheduler/scheduler.h"
#include "farm/v1/actions.grpc.pb.h"

namespace farm::coordinator {

class ActionServiceImpl final : public farm::v1::ActionService::Service {
 public:
  ActionServiceImpl(const RpcGate* gate, Scheduler* scheduler, CompileResultTable* compile_results);

  grpc::Status Execute(grpc::ServerContext* context, const farm::v1::ExecuteRequest* request,
                       farm::v1::ExecuteResponse* response) override;
  grpc::Status Wait(grpc::ServerContext* context, const farm::v1::WaitRequest* request,
                    farm::v1::WaitResponse* response) override;
  grpc::Status Get(grpc::ServerContext* context, const farm::v1::GetActionRequest* request,
                   farm::v1::ActionStatus* response) override;
  grpc::Status Cancel(grpc::ServerContext* context, const farm::v1::CancelActionRequest* request,
                      farm::v1::ActionStatus* response) override;
  grpc::Status GetCompileResult(grpc::ServerContext* context,
                                const farm::v1::GetCompileResultRequest* request,
                                farm::v1::CompileResult* response) override;
  grpc::Status PutCompileResult(grpc::ServerContext* context,
                                const farm::v1::PutCompileResultRequest* request,
                                farm::v1::PutCompileResultResponse* response) override;

 private:
  const RpcGate* gate_;
  Scheduler* scheduler_;
  CompileResultTable* compile_results_;
};

}  // namespace farm::coordinator
