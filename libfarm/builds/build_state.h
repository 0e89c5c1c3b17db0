// Names of build states and kinds as users see them (tables, JSON, metrics, logs).
#pragma once

#include <string>

#include "farm/v1/builds.pb.h"

namespace farm {

// "queued", "building", "verifying", "publishing", "succeeded", "failed", "cancelled".
std::string BuildStateName(farm::v1::BuildState state);
// "compile", "wheel".
std::string BuildKindName(farm::v1::BuildKind kind);
// Succeeded, failed or cancelled: nothing changes it any more.
bool IsTerminalBuildState(farm::v1::BuildState state);

}  // namespace farm
