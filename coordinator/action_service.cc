#include "coordinator/action_service.h"

#include "absl/strings/str_cat.h"
#include "coordinator/rpc_outcome.h"

namespace farm::coordinator {
namespace {

constexpr int kMaxActionsPerCall = 10000;
constexpr absl::Duration kMaxWait = absl::Minutes(5);

}  // namespace

ActionServiceImpl::ActionServiceImpl(const TokenVerifier* auth, Scheduler* scheduler,
                                     MetricsRegistry* metrics, CompileResultTable* compile_results)
    : auth_(auth), scheduler_(scheduler), metrics_(metrics), compile_results_(compile_results) {}

grpc::Status ActionServiceImpl::Execute(grpc::ServerContext* context,
                                        const farm::v1::ExecuteRequest* request,
                                        farm::v1::ExecuteResponse* response) {
  absl::StatusOr<Caller> caller = auth_->Authorize(*context, "ActionService.Execute");
  if (!caller.ok()) return FinishRpc(*metrics_, "Execute", caller.status());
  if (request->actions_size() > kMaxActionsPerCall) {
    return FinishRpc(
        *metrics_, "Execute",
        absl::InvalidArgumentError(absl::StrCat(
            request->actions_size(), " actions in one call; send at most ", kMaxActionsPerCall)));
  }
  for (int i = 0; i < request->actions_size(); ++i) {
    if (request->actions(i).has_wheel_build()) {
      return FinishRpc(*metrics_, "Execute",
                       absl::InvalidArgumentError(
                           absl::StrCat("action ", i,
                                        ": wheel builds are queued by the coordinator. Fix: "
                                        "use 'farmctl submit'")));
    }
    if (absl::Status s = CheckBuildScope(*caller, request->actions(i).build_id()); !s.ok()) {
      return FinishRpc(*metrics_, "Execute", s);
    }
  }
  std::vector<farm::v1::Action> actions(request->actions().begin(), request->actions().end());
  auto statuses = scheduler_->Execute(actions);
  if (!statuses.ok()) return FinishRpc(*metrics_, "Execute", statuses.status());
  for (auto& s : *statuses) *response->add_statuses() = std::move(s);
  return FinishRpc(*metrics_, "Execute", absl::OkStatus());
}

grpc::Status ActionServiceImpl::Wait(grpc::ServerContext* context,
                                     const farm::v1::WaitRequest* request,
                                     farm::v1::WaitResponse* response) {
  if (absl::Status s = auth_->Check(*context, "ActionService.Wait"); !s.ok())
    return FinishRpc(*metrics_, "Wait", s);
  const absl::Duration wait = std::min(kMaxWait, absl::Milliseconds(request->timeout_ms()));
  std::vector<std::string> ids(request->action_ids().begin(), request->action_ids().end());
  auto statuses = scheduler_->Wait(ids, wait);
  if (!statuses.ok()) return FinishRpc(*metrics_, "Wait", statuses.status());
  for (auto& s : *statuses) *response->add_statuses() = std::move(s);
  return FinishRpc(*metrics_, "Wait", absl::OkStatus());
}

grpc::Status ActionServiceImpl::Get(grpc::ServerContext* context,
                                    const farm::v1::GetActionRequest* request,
                                    farm::v1::ActionStatus* response) {
  if (absl::Status s = auth_->Check(*context, "ActionService.Get"); !s.ok())
    return FinishRpc(*metrics_, "Get", s);
  auto status = scheduler_->Get(request->action_id());
  if (!status.ok()) return FinishRpc(*metrics_, "Get", status.status());
  *response = std::move(*status);
  return FinishRpc(*metrics_, "Get", absl::OkStatus());
}

grpc::Status ActionServiceImpl::Cancel(grpc::ServerContext* context,
                                       const farm::v1::CancelActionRequest* request,
                                       farm::v1::ActionStatus* response) {
  absl::StatusOr<Caller> caller = auth_->Authorize(*context, "ActionService.Cancel");
  if (!caller.ok()) return FinishRpc(*metrics_, "Cancel", caller.status());
  if (caller->role == Role::kBuild) {
    auto action = scheduler_->Get(request->action_id());
    if (!action.ok()) return FinishRpc(*metrics_, "Cancel", action.status());
    if (absl::Status s = CheckBuildScope(*caller, action->build_id()); !s.ok()) {
      return FinishRpc(*metrics_, "Cancel", s);
    }
  }
  auto status = scheduler_->Cancel(request->action_id());
  if (!status.ok()) return FinishRpc(*metrics_, "Cancel", status.status());
  *response = std::move(*status);
  return FinishRpc(*metrics_, "Cancel", absl::OkStatus());
}

grpc::Status ActionServiceImpl::GetCompileResult(grpc::ServerContext* context,
                                                 const farm::v1::GetCompileResultRequest* request,
                                                 farm::v1::CompileResult* response) {
  if (absl::Status s = auth_->Check(*context, "ActionService.GetCompileResult"); !s.ok()) {
    return FinishRpc(*metrics_, "GetCompileResult", s);
  }
  auto result = compile_results_->Get(request->key());
  if (!result.ok()) return FinishRpc(*metrics_, "GetCompileResult", result.status());
  *response = std::move(*result);
  return FinishRpc(*metrics_, "GetCompileResult", absl::OkStatus());
}

grpc::Status ActionServiceImpl::PutCompileResult(grpc::ServerContext* context,
                                                 const farm::v1::PutCompileResultRequest* request,
                                                 farm::v1::PutCompileResultResponse*) {
  if (absl::Status s = auth_->Check(*context, "ActionService.PutCompileResult"); !s.ok()) {
    return FinishRpc(*metrics_, "PutCompileResult", s);
  }
  return FinishRpc(*metrics_, "PutCompileResult",
                   compile_results_->Put(request->key(), request->result()));
}

}  // namespace farm::coordinator
