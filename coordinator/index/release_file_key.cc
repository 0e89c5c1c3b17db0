#include "coordinator/index/release_file_key.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/publish/core_metadata.h"
#include "libfarm/versions/pep440_version.h"

namespace farm::coordinator {

absl::StatusOr<std::string> ReleaseFileKey(const WheelFilename& name) {
  auto version = ParsePep440Version(name.version);
  if (!version.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the wheel's version: ", version.status().message()));
  }
  std::set<std::string> tags;
  for (const std::string& tag : name.ExpandedTags()) tags.insert(absl::AsciiStrToLower(tag));
  // Spaces cannot occur in any part (wheel names hold none), so the key is unambiguous.
  return absl::StrCat(NormalizeProjectName(name.distribution), " ", version->Canonical(), " ",
                      absl::AsciiStrToLower(name.build_tag), " ", absl::StrJoin(tags, "."));
}

}  // namespace farm::coordinator
