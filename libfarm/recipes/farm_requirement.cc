#include "libfarm/recipes/farm_requirement.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/publish/core_metadata.h"
#include "libfarm/recipes/prerequisite.h"
#include "libfarm/versions/pep440_version.h"

namespace farm {
namespace {

absl::Status Malformed(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "\"", text, "\" is not a farm requirement: ", why,
      ". Fix: pin one version the farm builds, e.g. \"torch==2.9.1\" (the farm adds its "
      "+cuXY.smAB label; a range or any other requirement belongs in [python] requirements)"));
}

// The public part of a PEP 440 version, in canonical form ("2.9.1+cu130.sm75" -> "2.9.1").
std::string PublicCanonical(const Pep440Version& v) {
  Pep440Version copy = v;
  copy.local.clear();
  return copy.Canonical();
}

}  // namespace

absl::StatusOr<FarmRequirement> ParseFarmRequirement(absl::string_view text) {
  const absl::string_view stripped = absl::StripAsciiWhitespace(text);
  const size_t eq = stripped.find("==");
  if (eq == absl::string_view::npos || stripped.find("===") != absl::string_view::npos) {
    return Malformed(text, "it must be NAME==VERSION");
  }
  const absl::string_view name = absl::StripAsciiWhitespace(stripped.substr(0, eq));
  const absl::string_view version = absl::StripAsciiWhitespace(stripped.substr(eq + 2));
  auto project = RequirementProjectName(name);
  if (!project.ok() || *project != name) return Malformed(text, "the name is not a project name");
  auto parsed = ParsePep440Version(version);
  if (!parsed.ok()) return Malformed(text, "the version is not a PEP 440 version");
  if (!parsed->local.empty()) {
    return Malformed(text, "it carries a local label (+...), which the farm sets itself");
  }
  return FarmRequirement{.project = std::string(name), .version = std::string(version)};
}

absl::Status CheckFallbackIndexUrl(absl::string_view url) {
  const bool web = absl::StartsWith(url, "https://") || absl::StartsWith(url, "http://");
  const bool blank = std::any_of(url.begin(), url.end(), [](char c) {
    return absl::ascii_isspace(static_cast<unsigned char>(c));
  });
  if (web && !blank && url.find("://") + 3 < url.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "\"", url,
      "\" is not a package index URL. Fix: give a PEP 503 simple index, e.g. "
      "\"https://download.pytorch.org/whl/cu130\", or leave index out for the build host's "
      "package index (PIP_INDEX_URL, else PyPI)"));
}

std::string FallbackIndexName(absl::string_view index_url) {
  return index_url.empty()
             ? std::string("the build host's package index (PIP_INDEX_URL, else PyPI)")
             : absl::StrCat("the package index ", index_url);
}

bool FarmRequirementMatches(const FarmRequirement& requirement, absl::string_view package,
                            absl::string_view version) {
  if (NormalizeProjectName(requirement.project) != NormalizeProjectName(package)) return false;
  auto want = ParsePep440Version(requirement.version);
  auto have = ParsePep440Version(version);
  return want.ok() && have.ok() && PublicCanonical(*want) == PublicCanonical(*have);
}

}  // namespace farm
