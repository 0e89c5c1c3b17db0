// FARM_NVCC_STRICT=1: a call farm-nvcc would run with plain nvcc fails instead, naming the
// source file and the reason (libfarm/launcher/strict_mode.h).
#pragma once

#include <string>

#include "farm_nvcc/nvcc_locator.h"

namespace farm {

// The source file(s) the call compiles, as nvcc's command line names them (the inputs
// ParseNvccCommandLine finds), or "the nvcc call" when it names none or does not parse.
std::string CallSourceFile(const NvccInvocation& call);

// "farm-nvcc: strict mode: k.cu would run plain nvcc: <reason>. Fix: ..."
std::string StrictModeMessage(const NvccInvocation& call, const std::string& reason);

}  // namespace farm
