#include "farm_nvcc/strict_mode.h"

#include "absl/strings/str_join.h"
#include "libfarm/launcher/strict_mode.h"
#include "libfarm/nvcc/nvcc_command_line.h"

namespace farm {

std::string CallSourceFile(const NvccInvocation& call) {
  auto command = ParseNvccCommandLine(call.args);
  if (!command.ok() || command->inputs.empty()) return "the nvcc call";
  return absl::StrJoin(command->inputs, " ");
}

std::string StrictModeMessage(const NvccInvocation& call, const std::string& reason) {
  return StrictModeMessage(
      {"farm-nvcc", CallSourceFile(call), "run plain nvcc", reason,
       "change what the reason names so the call splits (docs/farm-nvcc.md lists what splits)",
       "let it run plain nvcc on the build host: unset FARM_NVCC_STRICT (in a recipe, [build] "
       "strict_nvcc = false)"});
}

}  // namespace farm
