// Tells the coordinator how one farm-nvcc (or farm-cc) call ended (split, cached, fallback with its
// reason, compile error), so a build's fallbacks are counted and shown (issue 13). Best
// effort: a short deadline, and a coordinator that is away never fails the compile.
#pragma once

#include <string>

#include "farm/v1/builds.pb.h"
#include "farm_nvcc/farm_nvcc_options.h"

namespace farm {

// Sends the report under options.build_id; failures are logged at debug level only.
void ReportCallOutcome(const FarmNvccOptions& options, farm::v1::NvccCallOutcome outcome,
                       const std::string& reason = "");

// The same for either launcher: farm-nvcc's nvcc calls, farm-cc's C/C++ compiles (kind HOST).
void ReportCallOutcome(const CoordinatorChoice& target, const std::string& build_id,
                       farm::v1::CompileCallKind kind, farm::v1::NvccCallOutcome outcome,
                       const std::string& reason);

}  // namespace farm
