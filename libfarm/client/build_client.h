// farmctl's view of farm.v1.BuildService: token attached, deadlines set, errors readable.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "farm/v1/builds.grpc.pb.h"
#include "libfarm/client/call_report_limits.h"
#include "libfarm/client/coordinator_call.h"
#include "libfarm/client/coordinator_target.h"

namespace farm {

// A fallback's reason as a call report carries it: at most `max_bytes`, every byte outside
// printable ASCII but '\n' and '\t' as '?' (the coordinator takes valid UTF-8 only and
// classes the text anyway).
std::string ReportableCallReason(const std::string& reason, size_t max_bytes = kMaxCallReasonBytes);

// What a call the farm ran reports of its time (issue 45): its unit (the source as the call
// names it), its wall time and where that went.
struct CompileCallTiming {
  std::string unit;
  double wall_seconds = 0;
  farm::v1::CallPhases phases;
};

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
  // farm-nvcc's report of one nvcc call (or any launcher's, with request.kind set); within the
  // client's timeout.
  absl::Status ReportNvccCall(const farm::v1::ReportNvccCallRequest& request);
  // A launcher's report of one compile call of build `build_id`: farm-nvcc's nvcc calls (kind
  // COMPILE_CALL_KIND_NVCC) or farm-cc's host compiles (COMPILE_CALL_KIND_HOST), with the
  // code a fallback is counted by and its reason made reportable (ReportableCallReason), or
  // the timing of a call the farm ran (its unit cut to kMaxCallUnitBytes, made reportable
  // likewise); within the client's timeout.
  absl::Status ReportCompileCall(
      const std::string& build_id, farm::v1::CompileCallKind kind,
      farm::v1::NvccCallOutcome outcome,
      farm::v1::FallbackReason reason_code = farm::v1::FALLBACK_REASON_UNSPECIFIED,
      const std::string& reason = "", const CompileCallTiming* timing = nullptr);

 private:
  std::unique_ptr<farm::v1::BuildService::StubInterface> stub_;
  CoordinatorCall call_;
};

}  // namespace farm
