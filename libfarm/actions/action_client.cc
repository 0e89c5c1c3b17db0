#include "libfarm/actions/action_client.h"

#include <algorithm>
#include <chrono>

#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/retry.h"
#include "libfarm/rpc/token_auth.h"

namespace farm {

bool IsTerminalActionState(farm::v1::ActionState state) {
  return state == farm::v1::ACTION_STATE_COMPLETED || state == farm::v1::ACTION_STATE_FAILED ||
         state == farm::v1::ACTION_STATE_CANCELLED;
}

ActionClient::ActionClient(std::unique_ptr<farm::v1::ActionService::StubInterface> stub,
                           std::string token)
    : stub_(std::move(stub)), token_(std::move(token)) {}

std::unique_ptr<ActionClient> ActionClient::Connect(const std::string& address,
                                                    const std::string& token,
                                                    const ChannelOptions& channel) {
  return std::make_unique<ActionClient>(
      farm::v1::ActionService::NewStub(DialCoordinator(address, channel)), token);
}

void ActionClient::Prepare(grpc::ClientContext& ctx, absl::Duration timeout) const {
  AttachToken(ctx, token_);
  ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
}

absl::StatusOr<std::vector<farm::v1::ActionStatus>> ActionClient::Execute(
    const std::vector<farm::v1::Action>& actions) {
  farm::v1::ExecuteRequest req;
  for (const auto& a : actions) *req.add_actions() = a;
  farm::v1::ExecuteResponse resp;
  // A busy coordinator ran none of the call: it is sent again after a pause (back-pressure).
  // Any other failure may have queued the actions already, or means the coordinator is away:
  // the caller's to handle (a launcher compiles locally).
  const RetryOptions busy{.deadline = absl::Now() + kBusyPatience,
                          .initial_backoff = absl::Milliseconds(100),
                          .max_backoff = absl::Seconds(2),
                          .retry_only = IsCoordinatorBusy};
  absl::Status s = Retry(busy, [&] {
    grpc::ClientContext ctx;
    Prepare(ctx, absl::Seconds(60));
    resp.Clear();
    return FromGrpcStatus(stub_->Execute(&ctx, req, &resp));
  });
  if (!s.ok()) return s;
  return std::vector<farm::v1::ActionStatus>(resp.statuses().begin(), resp.statuses().end());
}

absl::StatusOr<std::vector<farm::v1::ActionStatus>> ActionClient::WaitAll(
    const std::vector<std::string>& ids, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  // Each poll is one Retry: the coordinator may be restarting, so a failure a retry may fix
  // is waited out until the deadline; anything else is an answer.
  const RetryOptions retry{.deadline = deadline,
                           .initial_backoff = absl::Milliseconds(100),
                           .max_backoff = absl::Seconds(2)};
  std::vector<farm::v1::ActionStatus> last;
  while (true) {
    absl::Status s = Retry(retry, [&] {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return absl::DeadlineExceededError("the wait for the actions timed out");
      }
      const absl::Duration poll = std::min(left, absl::Seconds(20));
      grpc::ClientContext ctx;
      Prepare(ctx, poll + absl::Seconds(5));
      farm::v1::WaitRequest req;
      for (const auto& id : ids) req.add_action_ids(id);
      req.set_timeout_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(poll)));
      farm::v1::WaitResponse resp;
      absl::Status status = FromGrpcStatus(stub_->Wait(&ctx, req, &resp));
      if (status.ok()) last.assign(resp.statuses().begin(), resp.statuses().end());
      return status;
    });
    if (!s.ok()) {
      // Out of time while the coordinator was away: the latest statuses are the answer.
      if (RetryMayFix(s)) return last;
      return s;
    }
    if (std::all_of(last.begin(), last.end(), [](const farm::v1::ActionStatus& st) {
          return IsTerminalActionState(st.state());
        })) {
      return last;
    }
    if (absl::Now() >= deadline) return last;
  }
}

absl::StatusOr<farm::v1::ActionStatus> ActionClient::Get(const std::string& id) {
  grpc::ClientContext ctx;
  Prepare(ctx, absl::Seconds(10));
  farm::v1::GetActionRequest req;
  req.set_action_id(id);
  farm::v1::ActionStatus resp;
  grpc::Status s = stub_->Get(&ctx, req, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return resp;
}

absl::StatusOr<farm::v1::ActionStatus> ActionClient::Cancel(const std::string& id) {
  grpc::ClientContext ctx;
  Prepare(ctx, absl::Seconds(10));
  farm::v1::CancelActionRequest req;
  req.set_action_id(id);
  farm::v1::ActionStatus resp;
  grpc::Status s = stub_->Cancel(&ctx, req, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return resp;
}

absl::StatusOr<farm::v1::CompileResult> ActionClient::GetCompileResult(const std::string& key) {
  grpc::ClientContext ctx;
  Prepare(ctx, absl::Seconds(10));
  farm::v1::GetCompileResultRequest req;
  req.set_key(key);
  farm::v1::CompileResult resp;
  grpc::Status s = stub_->GetCompileResult(&ctx, req, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return resp;
}

absl::StatusOr<std::vector<double>> ActionClient::GetExpectedCosts(
    const std::vector<std::string>& history_keys) {
  grpc::ClientContext ctx;
  Prepare(ctx, absl::Seconds(10));
  farm::v1::GetExpectedCostsRequest req;
  for (const std::string& key : history_keys) req.add_history_keys(key);
  farm::v1::GetExpectedCostsResponse resp;
  grpc::Status s = stub_->GetExpectedCosts(&ctx, req, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  if (resp.expected_seconds_size() != req.history_keys_size()) {
    return absl::InternalError(absl::StrCat("the coordinator answered ",
                                            resp.expected_seconds_size(), " expected costs for ",
                                            req.history_keys_size(), " history keys"));
  }
  return std::vector<double>(resp.expected_seconds().begin(), resp.expected_seconds().end());
}

absl::Status ActionClient::PutCompileResult(const std::string& key,
                                            const farm::v1::CompileResult& result) {
  grpc::ClientContext ctx;
  Prepare(ctx, absl::Seconds(10));
  farm::v1::PutCompileResultRequest req;
  req.set_key(key);
  *req.mutable_result() = result;
  farm::v1::PutCompileResultResponse resp;
  return FromGrpcStatus(stub_->PutCompileResult(&ctx, req, &resp));
}

}  // namespace farm
