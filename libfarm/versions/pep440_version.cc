#include "libfarm/versions/pep440_version.h"

#include <algorithm>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace farm {
namespace {

// PEP 440 appendix B's pattern (as packaging uses it), anchored.
const std::regex& VersionPattern() {
  static const std::regex pattern(R"(v?(?:([0-9]+)!)?([0-9]+(?:\.[0-9]+)*))"
                                  R"(([-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?([0-9]+)?)?)"
                                  R"(((?:-([0-9]+))|(?:[-_.]?(post|rev|r)[-_.]?([0-9]+)?))?)"
                                  R"(([-_.]?(dev)[-_.]?([0-9]+)?)?)"
                                  R"((?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?)",
                                  std::regex::ECMAScript | std::regex::icase);
  return pattern;
}

std::string Number(const std::string& digits) {
  const size_t first = digits.find_first_not_of('0');
  return first == std::string::npos ? "0" : digits.substr(first);
}

bool AllDigits(absl::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return absl::ascii_isdigit(c); });
}

std::string Suffix(const Pep440Version& v) {
  std::string out;
  if (!v.pre_label.empty()) absl::StrAppend(&out, v.pre_label, v.pre_number);
  if (!v.post.empty()) absl::StrAppend(&out, ".post", v.post);
  if (!v.dev.empty()) absl::StrAppend(&out, ".dev", v.dev);
  if (!v.local.empty()) absl::StrAppend(&out, "+", v.local);
  return out;
}

}  // namespace

absl::StatusOr<Pep440Version> ParsePep440Version(absl::string_view text) {
  const std::string input(absl::StripAsciiWhitespace(text));
  std::smatch m;
  if (input.size() > 256 || !std::regex_match(input, m, VersionPattern())) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text.substr(0, 80),
                     "' is not a PEP 440 version (like 1.2, 2.0rc1, 1.0.post1, "
                     "2.9.1+cu130). Fix: set a valid version in the project's metadata"));
  }
  Pep440Version v;
  if (m[1].matched) v.epoch = Number(m[1]);
  for (absl::string_view part : absl::StrSplit(m[2].str(), '.')) {
    v.release.push_back(Number(std::string(part)));
  }
  if (m[3].matched) {
    const std::string label = absl::AsciiStrToLower(m[4].str());
    v.pre_label = label == "alpha"                                         ? "a"
                  : label == "beta"                                        ? "b"
                  : (label == "c" || label == "pre" || label == "preview") ? "rc"
                                                                           : label;
    v.pre_number = m[5].matched ? Number(m[5]) : "0";
  }
  if (m[6].matched) v.post = m[7].matched ? Number(m[7]) : m[9].matched ? Number(m[9]) : "0";
  if (m[10].matched) v.dev = m[12].matched ? Number(m[12]) : "0";
  if (m[13].matched) {
    std::vector<std::string> parts =
        absl::StrSplit(absl::AsciiStrToLower(m[13].str()), absl::ByAnyChar("-_."));
    for (std::string& part : parts) {
      if (AllDigits(part)) part = Number(part);
    }
    v.local = absl::StrJoin(parts, ".");
  }
  return v;
}

std::string Pep440Version::Normalized() const {
  return absl::StrCat(epoch == "0" ? "" : absl::StrCat(epoch, "!"), absl::StrJoin(release, "."),
                      Suffix(*this));
}

std::string Pep440Version::Canonical() const {
  size_t n = release.size();
  while (n > 1 && release[n - 1] == "0") --n;
  return absl::StrCat(epoch == "0" ? "" : absl::StrCat(epoch, "!"),
                      absl::StrJoin(release.begin(), release.begin() + n, "."), Suffix(*this));
}

}  // namespace farm
