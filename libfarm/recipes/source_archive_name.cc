#include "libfarm/recipes/source_archive_name.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace farm {

const std::vector<std::string>& SourceArchiveSuffixes() {
  static const auto* suffixes =
      new std::vector<std::string>{".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2"};
  return *suffixes;
}

bool HasSourceArchiveSuffix(absl::string_view name) {
  const auto& suffixes = SourceArchiveSuffixes();
  return std::any_of(suffixes.begin(), suffixes.end(), [&](const std::string& suffix) {
    return name.size() > suffix.size() && absl::EndsWithIgnoreCase(name, suffix);
  });
}

absl::Status CheckSourceArchiveName(absl::string_view name) {
  const bool plain =
      !name.empty() && name.size() <= 255 && absl::ascii_isalnum(name[0]) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-' || c == '+';
      });
  if (!plain) {
    return absl::InvalidArgumentError(
        absl::StrCat("the archive name \"", absl::CHexEscape(name),
                     "\" is not a plain file name (letters, digits, '.', '_', '-', '+')"));
  }
  if (!HasSourceArchiveSuffix(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", name, "\" is not a source archive: its name must end in one of ",
                     absl::StrJoin(SourceArchiveSuffixes(), ", "),
                     " (a tar archive, gzip, xz or bzip2 compressed)"));
  }
  return absl::OkStatus();
}

}  // namespace farm
