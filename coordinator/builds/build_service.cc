#include "coordinator/builds/build_service.h"

#include "absl/strings/str_cat.h"
#include "coordinator/rpc_outcome.h"
#include "libfarm/rpc/request_limits.h"

namespace farm::coordinator {
namespace {

constexpr uint32_t kDefaultListLimit = 100;
constexpr uint64_t kMaxLogChunk = uint64_t{1} << 20;

}  // namespace

absl::StatusOr<farm::v1::ListBuildsResponse> AnswerListBuilds(
    const BuildRegistry& builds, const farm::v1::ListBuildsRequest& request) {
  farm::v1::ListBuildsResponse out;
  for (auto& b : builds.List(request.limit() == 0 ? kDefaultListLimit : request.limit())) {
    *out.add_builds() = std::move(b);
  }
  return out;
}

absl::StatusOr<farm::v1::GetBuildLogsResponse> AnswerGetBuildLogs(
    const BuildRegistry& builds, const farm::v1::GetBuildLogsRequest& request) {
  const uint64_t max = request.max_bytes() == 0
                           ? kMaxLogChunk
                           : std::min<uint64_t>(request.max_bytes(), kMaxLogChunk);
  return builds.ReadLog(request.build_id(), request.offset(), max);
}

absl::StatusOr<farm::v1::ListActionsResponse> AnswerListActions(
    const BuildRegistry& builds, const farm::v1::ListActionsRequest& request) {
  auto entries = builds.Actions(request.build_id(), request.state(), request.limit());
  if (!entries.ok()) return entries.status();
  farm::v1::ListActionsResponse out;
  for (auto& e : *entries) *out.add_actions() = std::move(e);
  return out;
}

BuildServiceImpl::BuildServiceImpl(const TokenVerifier* auth, BuildRegistry* builds,
                                   MetricsRegistry* metrics, WheelSubmitter* submitter)
    : auth_(auth), builds_(builds), metrics_(metrics), submitter_(submitter) {}

grpc::Status BuildServiceImpl::ListBuilds(grpc::ServerContext* context,
                                          const farm::v1::ListBuildsRequest* request,
                                          farm::v1::ListBuildsResponse* response) {
  if (absl::Status s = auth_->Check(*context, "BuildService.ListBuilds"); !s.ok()) {
    return FinishRpc(*metrics_, "ListBuilds", s);
  }
  auto answer = AnswerListBuilds(*builds_, *request);
  if (!answer.ok()) return FinishRpc(*metrics_, "ListBuilds", answer.status());
  *response = std::move(*answer);
  return FinishRpc(*metrics_, "ListBuilds", absl::OkStatus());
}

grpc::Status BuildServiceImpl::GetBuild(grpc::ServerContext* context,
                                        const farm::v1::GetBuildRequest* request,
                                        farm::v1::Build* response) {
  if (absl::Status s = auth_->Check(*context, "BuildService.GetBuild"); !s.ok())
    return FinishRpc(*metrics_, "GetBuild", s);
  if (absl::Status s = CheckBuildId(request->build_id()); !s.ok())
    return FinishRpc(*metrics_, "GetBuild", s);
  auto build = builds_->Get(request->build_id());
  if (!build.ok()) return FinishRpc(*metrics_, "GetBuild", build.status());
  *response = std::move(*build);
  return FinishRpc(*metrics_, "GetBuild", absl::OkStatus());
}

grpc::Status BuildServiceImpl::GetBuildLogs(grpc::ServerContext* context,
                                            const farm::v1::GetBuildLogsRequest* request,
                                            farm::v1::GetBuildLogsResponse* response) {
  if (absl::Status s = auth_->Check(*context, "BuildService.GetBuildLogs"); !s.ok()) {
    return FinishRpc(*metrics_, "GetBuildLogs", s);
  }
  if (absl::Status s = CheckBuildId(request->build_id()); !s.ok())
    return FinishRpc(*metrics_, "GetBuildLogs", s);
  auto chunk = AnswerGetBuildLogs(*builds_, *request);
  if (!chunk.ok()) return FinishRpc(*metrics_, "GetBuildLogs", chunk.status());
  *response = std::move(*chunk);
  return FinishRpc(*metrics_, "GetBuildLogs", absl::OkStatus());
}

grpc::Status BuildServiceImpl::ListActions(grpc::ServerContext* context,
                                           const farm::v1::ListActionsRequest* request,
                                           farm::v1::ListActionsResponse* response) {
  if (absl::Status s = auth_->Check(*context, "BuildService.ListActions"); !s.ok()) {
    return FinishRpc(*metrics_, "ListActions", s);
  }
  if (absl::Status s = CheckBuildId(request->build_id()); !s.ok())
    return FinishRpc(*metrics_, "ListActions", s);
  auto answer = AnswerListActions(*builds_, *request);
  if (!answer.ok()) return FinishRpc(*metrics_, "ListActions", answer.status());
  *response = std::move(*answer);
  return FinishRpc(*metrics_, "ListActions", absl::OkStatus());
}

grpc::Status BuildServiceImpl::AppendBuildLog(grpc::ServerContext* context,
                                              const farm::v1::AppendBuildLogRequest* request,
                                              farm::v1::AppendBuildLogResponse* response) {
  absl::StatusOr<Caller> caller = auth_->Authorize(*context, "BuildService.AppendBuildLog");
  if (!caller.ok()) return FinishRpc(*metrics_, "AppendBuildLog", caller.status());
  if (absl::Status s = CheckBuildId(request->build_id()); !s.ok())
    return FinishRpc(*metrics_, "AppendBuildLog", s);
  if (absl::Status s = CheckBuildScope(*caller, request->build_id()); !s.ok()) {
    return FinishRpc(*metrics_, "AppendBuildLog", s);
  }
  if (request->data().size() > kMaxLogChunk) {
    return FinishRpc(*metrics_, "AppendBuildLog",
                     absl::InvalidArgumentError(
                         absl::StrCat("log chunk of ", request->data().size(),
                                      " bytes; send at most ", kMaxLogChunk, " bytes per call")));
  }
  auto end = builds_->AppendLog(request->build_id(), request->data());
  if (!end.ok()) return FinishRpc(*metrics_, "AppendBuildLog", end.status());
  response->set_next_offset(*end);
  return FinishRpc(*metrics_, "AppendBuildLog", absl::OkStatus());
}

grpc::Status BuildServiceImpl::SubmitBuild(grpc::ServerContext* context,
                                           const farm::v1::SubmitBuildRequest* request,
                                           farm::v1::SubmitBuildResponse* response) {
  if (absl::Status s = auth_->Check(*context, "BuildService.SubmitBuild"); !s.ok()) {
    return FinishRpc(*metrics_, "SubmitBuild", s);
  }
  if (absl::Status s = CheckSubmitBuildRequest(*request); !s.ok()) {
    return FinishRpc(*metrics_, "SubmitBuild", s);
  }
  auto answer = submitter_->Submit(*request);
  if (!answer.ok()) return FinishRpc(*metrics_, "SubmitBuild", answer.status());
  *response = std::move(*answer);
  return FinishRpc(*metrics_, "SubmitBuild", absl::OkStatus());
}

grpc::Status BuildServiceImpl::CancelBuild(grpc::ServerContext* context,
                                           const farm::v1::CancelBuildRequest* request,
                                           farm::v1::Build* response) {
  if (absl::Status s = auth_->Check(*context, "BuildService.CancelBuild"); !s.ok()) {
    return FinishRpc(*metrics_, "CancelBuild", s);
  }
  if (absl::Status s = CheckBuildId(request->build_id()); !s.ok())
    return FinishRpc(*metrics_, "CancelBuild", s);
  auto answer = submitter_->Cancel(request->build_id());
  if (!answer.ok()) return FinishRpc(*metrics_, "CancelBuild", answer.status());
  *response = std::move(*answer);
  return FinishRpc(*metrics_, "CancelBuild", absl::OkStatus());
}

grpc::Status BuildServiceImpl::ReportNvccCall(grpc::ServerContext* context,
                                              const farm::v1::ReportNvccCallRequest* request,
                                              farm::v1::ReportNvccCallResponse*) {
  absl::StatusOr<Caller> caller = auth_->Authorize(*context, "BuildService.ReportNvccCall");
  if (!caller.ok()) return FinishRpc(*metrics_, "ReportNvccCall", caller.status());
  if (absl::Status s = CheckBuildId(request->build_id()); !s.ok())
    return FinishRpc(*metrics_, "ReportNvccCall", s);
  if (absl::Status s = CheckBuildScope(*caller, request->build_id()); !s.ok()) {
    return FinishRpc(*metrics_, "ReportNvccCall", s);
  }
  absl::Status s = builds_->CountNvccCall(request->build_id(), *request);
  if (absl::IsNotFound(s)) {
    // Reports never create builds: a typo in FARM_BUILD_ID must not grow the registry.
    s = absl::InvalidArgumentError(absl::StrCat(
        "no build '", request->build_id().substr(0, 128),
        "' to count an nvcc call in. Fix: set FARM_BUILD_ID to a build 'farmctl builds' lists"));
  }
  return FinishRpc(*metrics_, "ReportNvccCall", s);
}

}  // namespace farm::coordinator
