#include "cli/farm_nvcc/strict_mode.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace farm {

std::string CallSourceFile(const NvccInvocation& call) {
  std::string source;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const std::string& a = call.args[i];
    if (a == "-o" || a == "--output-file" || a == "-MF" || a == "-MT") {
      ++i;  // their value is an output, not the source
      continue;
    }
    for (const char* ext : {".cu", ".cpp", ".cc", ".cxx", ".c"}) {
      if (absl::EndsWith(a, ext) && a[0] != '-') source = a;
    }
  }
  return source.empty() ? "the nvcc call" : source;
}

std::string StrictModeMessage(const NvccInvocation& call, const std::string& reason) {
  return absl::StrCat(
      "farm-nvcc: strict mode: ", CallSourceFile(call), " would run plain nvcc: ", reason,
      ". Fix: change what the reason names so the call splits (farm-nvcc's README lists what "
      "splits), or let it run plain nvcc on the build host: unset FARM_NVCC_STRICT (in a "
      "recipe, [build] strict_nvcc = false)");
}

}  // namespace farm
