// Wheel file names: {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

struct WheelFilename {
  std::string distribution;
  std::string version;
  std::string build_tag;                 // empty when absent
  std::vector<std::string> python_tags;  // compressed tag sets split on '.'
  std::vector<std::string> abi_tags;
  std::vector<std::string> platform_tags;

  // Every python-abi-platform combination, as the WHEEL file lists them.
  std::vector<std::string> ExpandedTags() const;
};

// The longest wheel file name accepted: a file name on Linux (NAME_MAX).
inline constexpr size_t kMaxWheelFilenameBytes = 255;

// Parses the basename of a wheel path (a directory part is ignored), strictly: wheel names
// come from builds and uploads, and their parts are spliced into paths, index pages and
// publish hooks. The distribution is ASCII letters, digits, '_' and '.' (beginning and ending
// with a letter or digit), the version PEP 440, the optional build tag a digit then letters,
// digits, '_' and '.', each tag letters, digits and '_' ('.' separates a compressed tag
// set). Anything else is INVALID_ARGUMENT quoting the (escaped) name and the rule it breaks.
absl::StatusOr<WheelFilename> ParseWheelFilename(absl::string_view path);

// PEP 503 normalisation with '_' as separator, as wheel names and dist-info folders use it.
std::string NormalizeDistributionName(absl::string_view name);

// A platform tag's meaning for the glibc check.
struct PlatformTag {
  enum class Kind { kAny, kManylinux, kMusllinux, kLinux, kOther };
  Kind kind = Kind::kOther;
  int glibc_major = 0;  // manylinux only; legacy aliases are translated (2014 -> 2.17)
  int glibc_minor = 0;
  std::string cpu;  // "x86_64", "aarch64", ... ; empty for "any"
};

PlatformTag ParsePlatformTag(absl::string_view tag);

}  // namespace farm
