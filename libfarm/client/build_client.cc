#include "libfarm/client/build_client.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/request_limits.h"

namespace farm {

std::string ReportableCallReason(const std::string& reason, size_t max_bytes) {
  std::string out = reason.substr(0, max_bytes);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = (c == '\n' || c == '\t') ? c : '?';
  }
  return out;
}

BuildClient::BuildClient(std::unique_ptr<farm::v1::BuildService::StubInterface> stub,
                         std::string address, std::string token, absl::Duration timeout)
    : stub_(std::move(stub)), call_(std::move(address), std::move(token), timeout) {}

absl::StatusOr<std::unique_ptr<BuildClient>> BuildClient::Connect(const CoordinatorChoice& choice) {
  auto target = ResolveCoordinatorTarget(choice);
  if (!target.ok()) return target.status();
  return std::make_unique<BuildClient>(
      farm::v1::BuildService::NewStub(DialCoordinator(target->address, target->channel)),
      target->address, target->token);
}

absl::StatusOr<farm::v1::ListBuildsResponse> BuildClient::ListBuilds(uint32_t limit) {
  grpc::ClientContext ctx;
  call_.Prepare(ctx);
  farm::v1::ListBuildsRequest req;
  req.set_limit(limit);
  farm::v1::ListBuildsResponse resp;
  if (grpc::Status s = stub_->ListBuilds(&ctx, req, &resp); !s.ok()) return call_.Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::Build> BuildClient::GetBuild(const std::string& id) {
  if (absl::Status s = CheckBuildId(id); !s.ok()) return s;
  grpc::ClientContext ctx;
  call_.Prepare(ctx);
  farm::v1::GetBuildRequest req;
  req.set_build_id(id);
  farm::v1::Build resp;
  if (grpc::Status s = stub_->GetBuild(&ctx, req, &resp); !s.ok()) return call_.Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::GetBuildLogsResponse> BuildClient::GetBuildLogs(const std::string& id,
                                                                         uint64_t offset) {
  if (absl::Status s = CheckBuildId(id); !s.ok()) return s;
  grpc::ClientContext ctx;
  call_.Prepare(ctx);
  farm::v1::GetBuildLogsRequest req;
  req.set_build_id(id);
  req.set_offset(offset);
  farm::v1::GetBuildLogsResponse resp;
  if (grpc::Status s = stub_->GetBuildLogs(&ctx, req, &resp); !s.ok()) return call_.Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::ListActionsResponse> BuildClient::ListActions(
    const std::string& build_id, farm::v1::ActionState state) {
  if (absl::Status s = CheckBuildId(build_id); !s.ok()) return s;
  grpc::ClientContext ctx;
  call_.Prepare(ctx);
  farm::v1::ListActionsRequest req;
  req.set_build_id(build_id);
  req.set_state(state);
  farm::v1::ListActionsResponse resp;
  if (grpc::Status s = stub_->ListActions(&ctx, req, &resp); !s.ok()) return call_.Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::SubmitBuildResponse> BuildClient::SubmitBuild(
    const farm::v1::SubmitBuildRequest& request) {
  if (absl::Status s = CheckSubmitBuildRequest(request); !s.ok()) return s;
  grpc::ClientContext ctx;
  call_.Prepare(ctx, absl::Minutes(5));
  farm::v1::SubmitBuildResponse resp;
  if (grpc::Status s = stub_->SubmitBuild(&ctx, request, &resp); !s.ok()) return call_.Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::Build> BuildClient::CancelBuild(const std::string& id) {
  if (absl::Status s = CheckBuildId(id); !s.ok()) return s;
  grpc::ClientContext ctx;
  call_.Prepare(ctx);
  farm::v1::CancelBuildRequest req;
  req.set_build_id(id);
  farm::v1::Build resp;
  if (grpc::Status s = stub_->CancelBuild(&ctx, req, &resp); !s.ok()) return call_.Explain(s);
  return resp;
}

absl::Status BuildClient::ReportCompileCall(const std::string& build_id,
                                            farm::v1::CompileCallKind kind,
                                            farm::v1::NvccCallOutcome outcome,
                                            farm::v1::FallbackReason reason_code,
                                            const std::string& reason,
                                            const CompileCallTiming* timing) {
  farm::v1::ReportNvccCallRequest request;
  request.set_build_id(build_id);
  request.set_kind(kind);
  request.set_outcome(outcome);
  request.set_reason_code(reason_code);
  request.set_reason(ReportableCallReason(reason));
  if (timing != nullptr) {
    request.set_unit(ReportableCallReason(timing->unit, kMaxCallUnitBytes));
    request.set_wall_seconds(timing->wall_seconds);
    *request.mutable_phases() = timing->phases;
  }
  return ReportNvccCall(request);
}

absl::Status BuildClient::ReportNvccCall(const farm::v1::ReportNvccCallRequest& request) {
  if (absl::Status s = CheckBuildId(request.build_id()); !s.ok()) return s;
  grpc::ClientContext ctx;
  call_.Prepare(ctx);
  farm::v1::ReportNvccCallResponse resp;
  if (grpc::Status s = stub_->ReportNvccCall(&ctx, request, &resp); !s.ok()) {
    return call_.Explain(s);
  }
  return absl::OkStatus();
}

}  // namespace farm
