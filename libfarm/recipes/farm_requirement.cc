#include "libfarm/recipes/farm_requirement.h"

#include "absl/strings/ascii.h"
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

bool FarmRequirementMatches(const FarmRequirement& requirement, absl::string_view package,
                            absl::string_view version) {
  if (NormalizeProjectName(requirement.project) != NormalizeProjectName(package)) return false;
  auto want = ParsePep440Version(requirement.version);
  auto have = ParsePep440Version(version);
  return want.ok() && have.ok() && PublicCanonical(*want) == PublicCanonical(*have);
}

}  // namespace farm
