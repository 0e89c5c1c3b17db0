// Dotted numeric versions: glibc "2.35", CUDA "12.9", "13.0".
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

absl::StatusOr<std::vector<int>> ParseDottedVersion(absl::string_view text);

// <0, 0, >0 like strcmp; missing components count as 0 ("13" == "13.0"). Unparseable
// versions compare as errors.
absl::StatusOr<int> CompareDottedVersions(absl::string_view a, absl::string_view b);

}  // namespace farm
