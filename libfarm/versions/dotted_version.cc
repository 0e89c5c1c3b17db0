#include "libfarm/versions/dotted_version.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace farm {

absl::StatusOr<std::vector<int>> ParseDottedVersion(absl::string_view text) {
  std::vector<int> parts;
  for (absl::string_view piece : absl::StrSplit(text, '.')) {
    int n = 0;
    if (!absl::SimpleAtoi(piece, &n) || n < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' is not a version like 2.35 or 13.0"));
    }
    parts.push_back(n);
  }
  return parts;
}

absl::StatusOr<int> CompareDottedVersions(absl::string_view a, absl::string_view b) {
  auto pa = ParseDottedVersion(a);
  if (!pa.ok()) return pa.status();
  auto pb = ParseDottedVersion(b);
  if (!pb.ok()) return pb.status();
  const size_t n = std::max(pa->size(), pb->size());
  for (size_t i = 0; i < n; ++i) {
    const int x = i < pa->size() ? (*pa)[i] : 0;
    const int y = i < pb->size() ? (*pb)[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

}  // namespace farm
