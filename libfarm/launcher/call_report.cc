#include "libfarm/launcher/call_report.h"

#include "libfarm/client/build_client.h"
#include "libfarm/logging/logger.h"
#include "libfarm/rpc/channel.h"

namespace farm {
namespace {

// Long enough for a loaded coordinator's synced write (reports arriving together share one)
// on a disk others are filling, short against a compile.
constexpr absl::Duration kReportTimeout = absl::Seconds(5);

}  // namespace

void ReportCallOutcome(const CoordinatorChoice& choice, const std::string& build_id,
                       farm::v1::CompileCallKind kind, farm::v1::NvccCallOutcome outcome,
                       farm::v1::FallbackReason reason_code, const std::string& reason,
                       const CompileCallTiming* timing) {
  auto log = ComponentLogger(kind == farm::v1::COMPILE_CALL_KIND_HOST ? "farm-cc" : "farm-nvcc");
  auto target = ResolveCoordinatorTarget(choice);
  if (!target.ok()) {
    log->debug("call not reported: {}", target.status().message());
    return;
  }
  BuildClient client(
      farm::v1::BuildService::NewStub(DialCoordinator(target->address, target->channel)),
      target->address, target->token, kReportTimeout);
  if (absl::Status s =
          client.ReportCompileCall(build_id, kind, outcome, reason_code, reason, timing);
      !s.ok()) {
    // Not counted: the build's figures are short by one call, which the build log says,
    // unless the coordinator is away altogether (the call's own line says so already).
    log->log(absl::IsUnavailable(s) ? spdlog::level::debug : spdlog::level::warn,
             "this call's outcome was not counted in build {}: {}", build_id, s.message());
  }
}

}  // namespace farm
