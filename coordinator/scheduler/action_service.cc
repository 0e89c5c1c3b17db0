#include "coordinator/scheduler/action_service.h"

#include "absl/strings/str_cat.h"
#include "coordinator/compile_cache/compile_cache_scope.h"
#include "coordinator/scheduler/action_key.h"
#include "coordinator/scheduler/history_scope.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {
namespace {

constexpr int kMaxActionsPerCall = 10000;
constexpr absl::Duration kMaxWait = absl::Minutes(5);
// A unit's archs are a handful; this bounds the lookups one request costs.
constexpr int kMaxExpectedCostKeys = 64;

}  // namespace

ActionServiceImpl::ActionServiceImpl(const RpcGate* gate, Scheduler* scheduler,
                                     CompileResultTable* compile_results,
                                     const BuildRegistry* builds)
    : gate_(gate),
      scheduler_(scheduler),
      compile_results_(compile_results),
      builds_(builds),
      waits_(scheduler) {}

absl::Status ActionServiceImpl::CheckActionScope(const Caller& caller,
                                                 const std::string& id) const {
  if (caller.role != Role::kBuild) return absl::OkStatus();
  FARM_ASSIGN_OR_RETURN(auto action, scheduler_->Get(id));
  return CheckBuildScope(caller, action.build_id());
}

grpc::Status ActionServiceImpl::Execute(grpc::ServerContext* context,
                                        const farm::v1::ExecuteRequest* request,
                                        farm::v1::ExecuteResponse* response) {
  return gate_->Serve(*context, "ActionService.Execute", [&](const Caller& caller) {
    if (request->actions_size() > kMaxActionsPerCall) {
      return absl::InvalidArgumentError(absl::StrCat(
          request->actions_size(), " actions in one call; send at most ", kMaxActionsPerCall));
    }
    for (int i = 0; i < request->actions_size(); ++i) {
      if (request->actions(i).has_wheel_build() || request->actions(i).has_smoke_test()) {
        return absl::InvalidArgumentError(
            absl::StrCat("action ", i,
                         ": wheel builds and their smoke tests are queued by the coordinator. "
                         "Fix: use 'farmctl submit'"));
      }
      FARM_RETURN_IF_ERROR(CheckBuildScope(caller, request->actions(i).build_id()));
    }
    std::vector<farm::v1::Action> actions(request->actions().begin(), request->actions().end());
    FARM_ASSIGN_OR_RETURN(const HistoryScopes history, HistoryScopesOf(caller, *builds_));
    FARM_ASSIGN_OR_RETURN(auto statuses, scheduler_->Execute(actions, history));
    for (auto& s : statuses) *response->add_statuses() = std::move(s);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ActionServiceImpl::Wait(grpc::CallbackServerContext* context,
                                                  const farm::v1::WaitRequest* request,
                                                  farm::v1::WaitResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const grpc::Status taken = gate_->ServeLongPoll(
      *context, "ActionService.Wait",
      [&](const Caller& caller, CallAdmission::Ticket place) -> absl::Status {
        // A build token waits only for its own build's actions (and so learns no other's
        // outputs).
        for (const std::string& id : request->action_ids()) {
          FARM_RETURN_IF_ERROR(CheckActionScope(caller, id));
        }
        const absl::Duration wait = std::min(kMaxWait, absl::Milliseconds(request->timeout_ms()));
        std::vector<std::string> ids(request->action_ids().begin(), request->action_ids().end());
        // The place is held until the answer; the reactor and response live until Finish.
        auto held = std::make_shared<CallAdmission::Ticket>(std::move(place));
        waits_.Add(
            std::move(ids), absl::Now() + wait,
            [this, reactor, response,
             held](absl::StatusOr<std::vector<farm::v1::ActionStatus>> statuses) {
              if (statuses.ok()) {
                for (auto& s : *statuses) *response->add_statuses() = std::move(s);
              }
              const grpc::Status answer = gate_->Finish(
                  "ActionService.Wait", statuses.ok() ? absl::OkStatus() : statuses.status());
              reactor->Finish(answer);
            },
            [context] { return context->IsCancelled(); });
        return absl::OkStatus();
      });
  if (!taken.ok()) reactor->Finish(taken);
  return reactor;
}

grpc::Status ActionServiceImpl::Get(grpc::ServerContext* context,
                                    const farm::v1::GetActionRequest* request,
                                    farm::v1::ActionStatus* response) {
  return gate_->Serve(*context, "ActionService.Get", [&](const Caller& caller) {
    FARM_RETURN_IF_ERROR(CheckActionScope(caller, request->action_id()));
    FARM_ASSIGN_OR_RETURN(*response, scheduler_->Get(request->action_id()));
    return absl::OkStatus();
  });
}

grpc::Status ActionServiceImpl::Cancel(grpc::ServerContext* context,
                                       const farm::v1::CancelActionRequest* request,
                                       farm::v1::ActionStatus* response) {
  return gate_->Serve(*context, "ActionService.Cancel", [&](const Caller& caller) {
    FARM_RETURN_IF_ERROR(CheckActionScope(caller, request->action_id()));
    FARM_ASSIGN_OR_RETURN(*response, scheduler_->Cancel(request->action_id()));
    return absl::OkStatus();
  });
}

grpc::Status ActionServiceImpl::GetCompileResult(grpc::ServerContext* context,
                                                 const farm::v1::GetCompileResultRequest* request,
                                                 farm::v1::CompileResult* response) {
  return gate_->Serve(*context, "ActionService.GetCompileResult", [&](const Caller& caller) {
    FARM_ASSIGN_OR_RETURN(const CompileCacheScopes scopes, CompileCacheScopesOf(caller, *builds_));
    FARM_ASSIGN_OR_RETURN(*response, compile_results_->Get(scopes.read, request->key()));
    return absl::OkStatus();
  });
}

grpc::Status ActionServiceImpl::GetExpectedCosts(grpc::ServerContext* context,
                                                 const farm::v1::GetExpectedCostsRequest* request,
                                                 farm::v1::GetExpectedCostsResponse* response) {
  return gate_->Serve(*context, "ActionService.GetExpectedCosts", [&](const Caller& caller) {
    if (request->history_keys_size() > kMaxExpectedCostKeys) {
      return absl::InvalidArgumentError(absl::StrCat(
          request->history_keys_size(), " history keys in one request; the limit is ",
          kMaxExpectedCostKeys, ". Fix: ask for one translation unit's archs at a time"));
    }
    std::vector<std::string> keys;
    for (const std::string& key : request->history_keys()) {
      if (key.size() > kMaxHistoryKeyBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("history key of ", key.size(), " bytes; the limit is ",
                         kMaxHistoryKeyBytes, ". Fix: name the translation unit and arch only"));
      }
      keys.push_back(key);
    }
    // Only what the caller's own scopes (and the admins') have learnt: another tenant's
    // history says which units it compiled and for how long.
    FARM_ASSIGN_OR_RETURN(const HistoryScopes history, HistoryScopesOf(caller, *builds_));
    for (double s : scheduler_->LearntSeconds(history.read, keys)) {
      response->add_expected_seconds(s);
    }
    return absl::OkStatus();
  });
}

grpc::Status ActionServiceImpl::PutCompileResult(grpc::ServerContext* context,
                                                 const farm::v1::PutCompileResultRequest* request,
                                                 farm::v1::PutCompileResultResponse*) {
  return gate_->Serve(*context, "ActionService.PutCompileResult", [&](const Caller& caller) {
    FARM_ASSIGN_OR_RETURN(const CompileCacheScopes scopes, CompileCacheScopesOf(caller, *builds_));
    return compile_results_->Put(scopes.write, request->key(), request->result());
  });
}

}  // namespace farm::coordinator
