#include "libfarm/files/relative_path.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace farm {

absl::Status ValidateRelativePath(absl::string_view path) {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("path '", path, "' ", why,
                                                   ": paths must be relative and stay inside the "
                                                   "action's scratch directory"));
  };
  if (path.empty()) return refuse("is empty");
  if (path.size() > 4096) return refuse("is too long");
  if (absl::StrContains(path, '\0')) return refuse("contains a NUL byte");
  if (path.front() == '/') return refuse("is absolute");
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == ".") return refuse("has an empty or '.' component");
    if (part == "..") return refuse("climbs out with '..'");
  }
  return absl::OkStatus();
}

}  // namespace farm
