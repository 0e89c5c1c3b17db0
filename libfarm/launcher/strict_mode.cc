#include "libfarm/launcher/strict_mode.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace farm {

std::string StrictModeMessage(const StrictRefusal& r) {
  std::string message =
      absl::StrCat(r.launcher, ": strict mode: ", r.source, " would ", r.would, ": ", r.reason);
  if (absl::StrContains(r.reason, ". Fix: ")) {
    absl::StrAppend(&message, "; or ", r.relax);
  } else {
    absl::StrAppend(&message, ". Fix: ", r.fix, ", or ", r.relax);
  }
  return message;
}

}  // namespace farm
