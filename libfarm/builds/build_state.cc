#include "libfarm/builds/build_state.h"

namespace farm {

std::string BuildStateName(farm::v1::BuildState state) {
  switch (state) {
    case farm::v1::BUILD_STATE_QUEUED:
      return "queued";
    case farm::v1::BUILD_STATE_BUILDING:
      return "building";
    case farm::v1::BUILD_STATE_VERIFYING:
      return "verifying";
    case farm::v1::BUILD_STATE_PUBLISHING:
      return "publishing";
    case farm::v1::BUILD_STATE_SUCCEEDED:
      return "succeeded";
    case farm::v1::BUILD_STATE_FAILED:
      return "failed";
    case farm::v1::BUILD_STATE_CANCELLED:
      return "cancelled";
    default:
      return "unknown";
  }
}

std::string BuildKindName(farm::v1::BuildKind kind) {
  return kind == farm::v1::BUILD_KIND_WHEEL ? "wheel" : "compile";
}

bool IsTerminalBuildState(farm::v1::BuildState state) {
  return state == farm::v1::BUILD_STATE_SUCCEEDED || state == farm::v1::BUILD_STATE_FAILED ||
         state == farm::v1::BUILD_STATE_CANCELLED;
}

}  // namespace farm
