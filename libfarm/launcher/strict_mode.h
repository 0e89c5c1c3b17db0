// Strict mode (FARM_NVCC_STRICT=1, FARM_CC_STRICT=1): a call a launcher would run on the build
// host fails instead, naming the source and the reason, so a build that must run on the farm
// cannot quietly become a slow single-host build (issue 13).
#pragma once

#include <string>

namespace farm {

// What a launcher exits with when strict mode refuses a call.
inline constexpr int kStrictExitCode = 3;

struct StrictRefusal {
  std::string launcher;  // "farm-nvcc"
  std::string source;    // the source file(s) of the call, "k.cu"
  std::string would;     // what would happen instead, "run plain nvcc"
  std::string reason;    // why, as the launcher reports it
  std::string fix;       // what makes the call go to the farm, for a reason that names no fix
  std::string relax;     // how to let it run here, "unset FARM_NVCC_STRICT"
};

// "farm-nvcc: strict mode: k.cu would run plain nvcc: <reason>. Fix: <fix>, or <relax>"; a
// reason that names its own fix keeps it ("<reason>; or <relax>"): the generic one would bury it.
std::string StrictModeMessage(const StrictRefusal& refusal);

}  // namespace farm
