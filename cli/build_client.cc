#include "cli/build_client.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "cli/coordinator_target.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/token_auth.h"
#include "libfarm/status/grpc_status.h"

namespace farm::cli {

BuildClient::BuildClient(std::unique_ptr<farm::v1::BuildService::StubInterface> stub,
                         std::string address, std::string token, absl::Duration timeout)
    : stub_(std::move(stub)),
      address_(std::move(address)),
      token_(std::move(token)),
      timeout_(timeout) {}

absl::StatusOr<std::unique_ptr<BuildClient>> BuildClient::Connect(const GlobalOptions& global) {
  auto target = ResolveCoordinatorTarget(global);
  if (!target.ok()) return target.status();
  return std::make_unique<BuildClient>(
      farm::v1::BuildService::NewStub(DialCoordinator(target->address)), target->address,
      target->token);
}

void BuildClient::Prepare(grpc::ClientContext& ctx, absl::Duration timeout) const {
  AttachToken(ctx, token_);
  ctx.set_deadline(std::chrono::system_clock::now() +
                   absl::ToChronoMilliseconds(std::max(timeout, timeout_)));
}

absl::Status BuildClient::Explain(const grpc::Status& status) const {
  absl::Status s = FromGrpcStatus(status);
  if (s.code() == absl::StatusCode::kUnavailable ||
      s.code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::Status(
        s.code(), absl::StrCat("cannot reach the coordinator at ", address_, " (", s.message(),
                               "). Fix: start one ('farmctl up' for a local "
                               "farm) or point --coordinator / FARM_COORDINATOR at it"));
  }
  if (s.code() == absl::StatusCode::kUnimplemented) {
    return absl::Status(s.code(), absl::StrCat("the coordinator at ", address_,
                                               " has no build status API; upgrade it"));
  }
  return s;
}

absl::StatusOr<farm::v1::ListBuildsResponse> BuildClient::ListBuilds(uint32_t limit) {
  grpc::ClientContext ctx;
  Prepare(ctx);
  farm::v1::ListBuildsRequest req;
  req.set_limit(limit);
  farm::v1::ListBuildsResponse resp;
  if (grpc::Status s = stub_->ListBuilds(&ctx, req, &resp); !s.ok()) return Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::Build> BuildClient::GetBuild(const std::string& id) {
  grpc::ClientContext ctx;
  Prepare(ctx);
  farm::v1::GetBuildRequest req;
  req.set_build_id(id);
  farm::v1::Build resp;
  if (grpc::Status s = stub_->GetBuild(&ctx, req, &resp); !s.ok()) return Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::GetBuildLogsResponse> BuildClient::GetBuildLogs(const std::string& id,
                                                                         uint64_t offset) {
  grpc::ClientContext ctx;
  Prepare(ctx);
  farm::v1::GetBuildLogsRequest req;
  req.set_build_id(id);
  req.set_offset(offset);
  farm::v1::GetBuildLogsResponse resp;
  if (grpc::Status s = stub_->GetBuildLogs(&ctx, req, &resp); !s.ok()) return Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::ListActionsResponse> BuildClient::ListActions(
    const std::string& build_id, farm::v1::ActionState state) {
  grpc::ClientContext ctx;
  Prepare(ctx);
  farm::v1::ListActionsRequest req;
  req.set_build_id(build_id);
  req.set_state(state);
  farm::v1::ListActionsResponse resp;
  if (grpc::Status s = stub_->ListActions(&ctx, req, &resp); !s.ok()) return Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::SubmitBuildResponse> BuildClient::SubmitBuild(
    const farm::v1::SubmitBuildRequest& request) {
  grpc::ClientContext ctx;
  Prepare(ctx, absl::Minutes(5));
  farm::v1::SubmitBuildResponse resp;
  if (grpc::Status s = stub_->SubmitBuild(&ctx, request, &resp); !s.ok()) return Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::Build> BuildClient::CancelBuild(const std::string& id) {
  grpc::ClientContext ctx;
  Prepare(ctx);
  farm::v1::CancelBuildRequest req;
  req.set_build_id(id);
  farm::v1::Build resp;
  if (grpc::Status s = stub_->CancelBuild(&ctx, req, &resp); !s.ok()) return Explain(s);
  return resp;
}

}  // namespace farm::cli
