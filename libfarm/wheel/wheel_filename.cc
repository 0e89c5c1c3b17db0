#include "libfarm/wheel/wheel_filename.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/versions/pep440_version.h"

namespace farm {
namespace {

// Every character of `text` is an ASCII letter or digit or one of `extra`.
bool OnlyChars(absl::string_view text, absl::string_view extra) {
  for (char c : text) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
        extra.find(c) == absl::string_view::npos) {
      return false;
    }
  }
  return true;
}

// A project name as the binary distribution format escapes it for a file name: PEP 508's
// name with each run of '-', '_' and '.' written as '_' (older tools kept '.').
bool IsDistributionName(absl::string_view name) {
  return !name.empty() && OnlyChars(name, "_.") &&
         absl::ascii_isalnum(static_cast<unsigned char>(name.front())) &&
         absl::ascii_isalnum(static_cast<unsigned char>(name.back()));
}

}  // namespace

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
  // The name may come from a build or an upload: quoted escaped, so a newline, a terminal
  // escape or a byte that is not UTF-8 never reaches a log, a reason or a page as itself.
  auto refuse = [&](absl::string_view rule) {
    return absl::InvalidArgumentError(
        absl::StrCat("wheel file name \"", absl::CHexEscape(base.substr(0, 300)), "\": ", rule));
  };
  if (base.size() > kMaxWheelFilenameBytes) {
    return refuse(absl::StrCat("longer than ", kMaxWheelFilenameBytes, " bytes"));
  }
  absl::string_view stem = base;
  if (!absl::ConsumeSuffix(&stem, ".whl")) return refuse("not a wheel (no .whl suffix)");
  std::vector<std::string> parts = absl::StrSplit(stem, '-');
  if (parts.size() != 5 && parts.size() != 6) {
    return refuse("expected NAME-VERSION[-BUILD]-PYTHON-ABI-PLATFORM.whl");
  }
  for (const std::string& part : parts) {
    if (part.empty()) return refuse("a part between dashes is empty");
  }
  WheelFilename name;
  name.distribution = parts[0];
  name.version = parts[1];
  if (!IsDistributionName(name.distribution)) {
    return refuse(absl::StrCat("the distribution name \"", absl::CHexEscape(name.distribution),
                               "\" may hold only ASCII letters, digits, '_' and '.', and must "
                               "begin and end with a letter or digit (PEP 427)"));
  }
  if (!OnlyChars(name.version, "_.+!") || !ParsePep440Version(name.version).ok()) {
    return refuse(absl::StrCat("the version \"", absl::CHexEscape(name.version),
                               "\" is not a PEP 440 version (like 1.2, 2.0rc1, 1.0.post1, "
                               "2.9.1+cu130)"));
  }
  if (parts.size() == 6) {
    name.build_tag = parts[2];
    if (!absl::ascii_isdigit(static_cast<unsigned char>(name.build_tag[0])) ||
        !OnlyChars(name.build_tag, "_.")) {
      return refuse(absl::StrCat("the build tag \"", absl::CHexEscape(name.build_tag),
                                 "\" must start with a digit and hold only ASCII letters, "
                                 "digits, '_' and '.' (PEP 427)"));
    }
  }
  constexpr const char* kKinds[] = {"python", "abi", "platform"};
  std::vector<std::string>* const sets[] = {&name.python_tags, &name.abi_tags, &name.platform_tags};
  for (size_t i = 0; i < 3; ++i) {
    const std::string& set = parts[parts.size() - 3 + i];
    *sets[i] = absl::StrSplit(set, '.');
    for (const std::string& tag : *sets[i]) {
      if (tag.empty() || !OnlyChars(tag, "_")) {
        return refuse(absl::StrCat("the ", kKinds[i], " tag set \"", absl::CHexEscape(set),
                                   "\" must be tags of ASCII letters, digits and '_', "
                                   "separated by '.' (PEP 425)"));
      }
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
