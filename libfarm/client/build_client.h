// farmctl's view of farm.v1.BuildService: token attached, deadlines set, errors readable.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "farm/v1/builds.grpc.pb.h"
#include "libfarm/client/coordinator_call.h"
#include "libfarm/client/coordinator_target.h"

namespace farm {

class BuildClient {
 public:
  BuildClient(std::unique_ptr<farm::v1::BuildService::StubInterface> stub, std::string address,
              std::string token, absl::Duration timeout = absl::Seconds(10));

  // Finds the coordinator and token the way every farmctl command does.
  static absl::StatusOr<std::unique_ptr<BuildClient>> Connect(const CoordinatorChoice& choice);

  absl::StatusOr<farm::v1::ListBuildsResponse> ListBuilds(uint32_t limit);
  absl::StatusOr<farm::v1::Build> GetBuild(const std::string& id);
  absl::StatusOr<farm::v1::GetBuildLogsResponse> GetBuildLogs(const std::string& id,
                                                              uint64_t offset);
  absl::StatusOr<farm::v1::ListActionsResponse> ListActions(const std::string& build_id,
                                                            farm::v1::ActionState state);
  // Planning reads the recipe's tree on the coordinator: allowed more time than a read.
  absl::StatusOr<farm::v1::SubmitBuildResponse> SubmitBuild(
      const farm::v1::SubmitBuildRequest& request);
  absl::StatusOr<farm::v1::Build> CancelBuild(const std::string& id);
  // farm-nvcc's report of one nvcc call; within the client's timeout.
  absl::Status ReportNvccCall(const farm::v1::ReportNvccCallRequest& request);

 private:
  std::unique_ptr<farm::v1::BuildService::StubInterface> stub_;
  CoordinatorCall call_;
};

}  // namespace farm
