// Tells the coordinator how one launcher call ended (split or on a worker, cached, run on the
// build host with its reason, compile error), so a build's fallbacks are counted and shown
// (issue 13). Best effort: a short deadline, and a coordinator that is away never fails the
// compile.
#pragma once

#include <string>

#include "farm/v1/builds.pb.h"
#include "libfarm/client/build_client.h"
#include "libfarm/client/coordinator_target.h"

namespace farm {

// Sends the report for a call of `kind` (farm-nvcc's nvcc calls, farm-cc's C/C++ compiles)
// under `build_id`, a fallback with the code it is counted by and the text that says why;
// a call the farm ran with its `timing` (where its time went) when given. A report the
// coordinator did not take is a warning: the build's figures are short by one call.
void ReportCallOutcome(const CoordinatorChoice& target, const std::string& build_id,
                       farm::v1::CompileCallKind kind, farm::v1::NvccCallOutcome outcome,
                       farm::v1::FallbackReason reason_code = farm::v1::FALLBACK_REASON_UNSPECIFIED,
                       const std::string& reason = "", const CompileCallTiming* timing = nullptr);

}  // namespace farm
