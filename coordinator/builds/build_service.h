// farm.v1.BuildService: build status, action timelines and logs for farmctl and the
// dashboard, and log upload from build hosts. Token-authenticated like every service.
#pragma once

#include "coordinator/builds/build_registry.h"
#include "coordinator/rpc_gate.h"
#include "farm/v1/builds.grpc.pb.h"

namespace farm::coordinator {

// Where SubmitBuild and CancelBuild go (the wheel pipeline); an interface so this service
// does not depend on it.
class WheelSubmitter {
 public:
  virtual ~WheelSubmitter() = default;
  // `submitted_by`: the caller, kept with the build (Build.submitted_by).
  virtual absl::StatusOr<farm::v1::SubmitBuildResponse> Submit(
      const farm::v1::SubmitBuildRequest& request, const farm::v1::Submitter& submitted_by) = 0;
  virtual absl::StatusOr<farm::v1::Build> Cancel(const std::string& build_id) = 0;
};

class BuildServiceImpl final : public farm::v1::BuildService::Service {
 public:
  BuildServiceImpl(const RpcGate* gate, BuildRegistry* builds, WheelSubmitter* submitter);

  grpc::Status ListBuilds(grpc::ServerContext* context, const farm::v1::ListBuildsRequest* request,
                          farm::v1::ListBuildsResponse* response) override;
  grpc::Status GetBuild(grpc::ServerContext* context, const farm::v1::GetBuildRequest* request,
                        farm::v1::Build* response) override;
  grpc::Status GetBuildLogs(grpc::ServerContext* context,
                            const farm::v1::GetBuildLogsRequest* request,
                            farm::v1::GetBuildLogsResponse* response) override;
  grpc::Status ListActions(grpc::ServerContext* context,
                           const farm::v1::ListActionsRequest* request,
                           farm::v1::ListActionsResponse* response) override;
  grpc::Status AppendBuildLog(grpc::ServerContext* context,
                              const farm::v1::AppendBuildLogRequest* request,
                              farm::v1::AppendBuildLogResponse* response) override;
  grpc::Status SubmitBuild(grpc::ServerContext* context,
                           const farm::v1::SubmitBuildRequest* request,
                           farm::v1::SubmitBuildResponse* response) override;
  grpc::Status CancelBuild(grpc::ServerContext* context,
                           const farm::v1::CancelBuildRequest* request,
                           farm::v1::Build* response) override;
  grpc::Status ReportNvccCall(grpc::ServerContext* context,
                              const farm::v1::ReportNvccCallRequest* request,
                              farm::v1::ReportNvccCallResponse* response) override;

 private:
  const RpcGate* gate_;
  BuildRegistry* builds_;
  WheelSubmitter* submitter_;
};

// The answers, shared by the gRPC service and the JSON API so both say the same.
absl::StatusOr<farm::v1::ListBuildsResponse> AnswerListBuilds(
    const BuildRegistry& builds, const farm::v1::ListBuildsRequest& request);
absl::StatusOr<farm::v1::GetBuildLogsResponse> AnswerGetBuildLogs(
    const BuildRegistry& builds, const farm::v1::GetBuildLogsRequest& request);
absl::StatusOr<farm::v1::ListActionsResponse> AnswerListActions(
    const BuildRegistry& builds, const farm::v1::ListActionsRequest& request);

}  // namespace farm::coordinator
