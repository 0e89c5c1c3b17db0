#include "libfarm/wheel/wheel_filename.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace farm {

std::vector<std::string> WheelFilename::ExpandedTags() const {
  std::vector<std::string> tags;
  for (const std::string& py : python_tags) {
    for (const std::string& abi : abi_tags) {
      for (const std::string& platform : platform_tags) {
        tags.push_back(absl::StrCat(py, "-", abi, "-", platform));
      }
    }
  }
  return tags;
}

std::string NormalizeDistributionName(absl::string_view name) {
  std::string out;
  bool in_separator = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_separator) out.push_back('_');
      in_separator = true;
    } else {
      out.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
      in_separator = false;
    }
  }
  return out;
}

absl::StatusOr<WheelFilename> ParseWheelFilename(absl::string_view path) {
  absl::string_view base = path;
  if (const size_t slash = base.rfind('/'); slash != absl::string_view::npos) {
    base = base.substr(slash + 1);
  }
  absl::string_view stem = base;
  if (!absl::ConsumeSuffix(&stem, ".whl")) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", base, "\" is not a wheel file name (no .whl suffix)"));
  }
  std::vector<std::string> parts = absl::StrSplit(stem, '-');
  if (parts.size() != 5 && parts.size() != 6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", base,
        "\" is not a valid wheel name: expected NAME-VERSION[-BUILD]-PYTHON-ABI-PLATFORM.whl"));
  }
  WheelFilename name;
  name.distribution = parts[0];
  name.version = parts[1];
  if (parts.size() == 6) {
    name.build_tag = parts[2];
    if (name.build_tag.empty() ||
        !absl::ascii_isdigit(static_cast<unsigned char>(name.build_tag[0]))) {
      return absl::InvalidArgumentError(absl::StrCat("\"", base, "\": build tag \"", name.build_tag,
                                                     "\" must start with a digit"));
    }
  }
  const size_t n = parts.size();
  name.python_tags = absl::StrSplit(parts[n - 3], '.');
  name.abi_tags = absl::StrSplit(parts[n - 2], '.');
  name.platform_tags = absl::StrSplit(parts[n - 1], '.');
  for (const std::string& part : parts) {
    if (part.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("\"", base, "\" has an empty name component"));
    }
  }
  return name;
}

PlatformTag ParsePlatformTag(absl::string_view tag) {
  PlatformTag result;
  if (tag == "any") {
    result.kind = PlatformTag::Kind::kAny;
    return result;
  }
  struct Legacy {
    absl::string_view prefix;
    int minor;
  };
  for (const Legacy& legacy :
       {Legacy{"manylinux1_", 5}, Legacy{"manylinux2010_", 12}, Legacy{"manylinux2014_", 17}}) {
    if (absl::StartsWith(tag, legacy.prefix)) {
      result.kind = PlatformTag::Kind::kManylinux;
      result.glibc_major = 2;
      result.glibc_minor = legacy.minor;
      result.cpu = std::string(tag.substr(legacy.prefix.size()));
      return result;
    }
  }
  for (auto [prefix, kind] :
       {std::pair{absl::string_view("manylinux_"), PlatformTag::Kind::kManylinux},
        std::pair{absl::string_view("musllinux_"), PlatformTag::Kind::kMusllinux}}) {
    absl::string_view rest = tag;
    if (!absl::ConsumePrefix(&rest, prefix)) continue;
    std::vector<absl::string_view> parts = absl::StrSplit(rest, absl::MaxSplits('_', 2));
    if (parts.size() == 3 && absl::SimpleAtoi(parts[0], &result.glibc_major) &&
        absl::SimpleAtoi(parts[1], &result.glibc_minor)) {
      result.kind = kind;
      result.cpu = std::string(parts[2]);
    }
    return result;
  }
  absl::string_view rest = tag;
  if (absl::ConsumePrefix(&rest, "linux_")) {
    result.kind = PlatformTag::Kind::kLinux;
    result.cpu = std::string(rest);
  }
  return result;
}

}  // namespace farm
