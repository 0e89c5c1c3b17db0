#include "coordinator/builds/build_service.h"

#include "absl/strings/str_cat.h"
#include "libfarm/auth/role.h"
#include "libfarm/rpc/request_limits.h"
#include "libfarm/status/status_macros.h"

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
  FARM_ASSIGN_OR_RETURN(auto entries,
                        builds.Actions(request.build_id(), request.state(), request.limit()));
  farm::v1::ListActionsResponse out;
  for (auto& e : entries) *out.add_actions() = std::move(e);
  return out;
}

BuildServiceImpl::BuildServiceImpl(const RpcGate* gate, BuildRegistry* builds,
                                   WheelSubmitter* submitter)
    : gate_(gate), builds_(builds), submitter_(submitter) {}

grpc::Status BuildServiceImpl::ListBuilds(grpc::ServerContext* context,
                                          const farm::v1::ListBuildsRequest* request,
                                          farm::v1::ListBuildsResponse* response) {
  return gate_->Serve(*context, "BuildService.ListBuilds", [&] {
    FARM_ASSIGN_OR_RETURN(*response, AnswerListBuilds(*builds_, *request));
    return absl::OkStatus();
  });
}

grpc::Status BuildServiceImpl::GetBuild(grpc::ServerContext* context,
                                        const farm::v1::GetBuildRequest* request,
                                        farm::v1::Build* response) {
  return gate_->Serve(*context, "BuildService.GetBuild", [&] {
    FARM_RETURN_IF_ERROR(CheckBuildId(request->build_id()));
    FARM_ASSIGN_OR_RETURN(*response, builds_->Get(request->build_id()));
    return absl::OkStatus();
  });
}

grpc::Status BuildServiceImpl::GetBuildLogs(grpc::ServerContext* context,
                                            const farm::v1::GetBuildLogsRequest* request,
                                            farm::v1::GetBuildLogsResponse* response) {
  return gate_->Serve(*context, "BuildService.GetBuildLogs", [&] {
    FARM_RETURN_IF_ERROR(CheckBuildId(request->build_id()));
    FARM_ASSIGN_OR_RETURN(*response, AnswerGetBuildLogs(*builds_, *request));
    return absl::OkStatus();
  });
}

grpc::Status BuildServiceImpl::ListActions(grpc::ServerContext* context,
                                           const farm::v1::ListActionsRequest* request,
                                           farm::v1::ListActionsResponse* response) {
  return gate_->Serve(*context, "BuildService.ListActions", [&] {
    FARM_RETURN_IF_ERROR(CheckBuildId(request->build_id()));
    FARM_ASSIGN_OR_RETURN(*response, AnswerListActions(*builds_, *request));
    return absl::OkStatus();
  });
}

grpc::Status BuildServiceImpl::AppendBuildLog(grpc::ServerContext* context,
                                              const farm::v1::AppendBuildLogRequest* request,
                                              farm::v1::AppendBuildLogResponse* response) {
  return gate_->Serve(*context, "BuildService.AppendBuildLog", [&](const Caller& caller) {
    FARM_RETURN_IF_ERROR(CheckBuildId(request->build_id()));
    FARM_RETURN_IF_ERROR(CheckBuildScope(caller, request->build_id()));
    if (request->data().size() > kMaxLogChunk) {
      return absl::InvalidArgumentError(absl::StrCat("log chunk of ", request->data().size(),
                                                     " bytes; send at most ", kMaxLogChunk,
                                                     " bytes per call"));
    }
    FARM_ASSIGN_OR_RETURN(const uint64_t end,
                          builds_->AppendLog(request->build_id(), request->data()));
    response->set_next_offset(end);
    return absl::OkStatus();
  });
}

grpc::Status BuildServiceImpl::SubmitBuild(grpc::ServerContext* context,
                                           const farm::v1::SubmitBuildRequest* request,
                                           farm::v1::SubmitBuildResponse* response) {
  return gate_->Serve(*context, "BuildService.SubmitBuild", [&](const Caller& caller) {
    FARM_RETURN_IF_ERROR(CheckSubmitBuildRequest(*request));
    farm::v1::Submitter submitted_by;
    submitted_by.set_token_id(caller.token_id);
    submitted_by.set_role(RoleName(caller.role));
    FARM_ASSIGN_OR_RETURN(*response, submitter_->Submit(*request, submitted_by));
    return absl::OkStatus();
  });
}

grpc::Status BuildServiceImpl::CancelBuild(grpc::ServerContext* context,
                                           const farm::v1::CancelBuildRequest* request,
                                           farm::v1::Build* response) {
  return gate_->Serve(*context, "BuildService.CancelBuild", [&] {
    FARM_RETURN_IF_ERROR(CheckBuildId(request->build_id()));
    FARM_ASSIGN_OR_RETURN(*response, submitter_->Cancel(request->build_id()));
    return absl::OkStatus();
  });
}

grpc::Status BuildServiceImpl::ReportNvccCall(grpc::ServerContext* context,
                                              const farm::v1::ReportNvccCallRequest* request,
                                              farm::v1::ReportNvccCallResponse*) {
  return gate_->Serve(*context, "BuildService.ReportNvccCall", [&](const Caller& caller) {
    FARM_RETURN_IF_ERROR(CheckBuildId(request->build_id()));
    FARM_RETURN_IF_ERROR(CheckBuildScope(caller, request->build_id()));
    absl::Status s = builds_->CountNvccCall(request->build_id(), *request);
    if (absl::IsNotFound(s)) {
      // Only a call the compile cache answered starts a build (a rebuild answered whole has
      // no action to start it); a fallback under a mistyped FARM_BUILD_ID must not.
      s = absl::InvalidArgumentError(
          absl::StrCat("no build '", request->build_id().substr(0, 128),
                       "' to count a compile call in. Fix: set FARM_BUILD_ID to a build 'farmctl "
                       "builds' lists"));
    }
    return s;
  });
}

}  // namespace farm::coordinator
