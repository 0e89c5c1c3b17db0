#include "coordinator/wheels/built_wheel_identity.h"

#include "absl/strings/str_cat.h"
#include "libfarm/publish/core_metadata.h"
#include "libfarm/publish/wheel_package.h"
#include "libfarm/versions/pep440_version.h"

namespace farm::coordinator {
namespace {

// The version less its local label, in canonical form: "2.9.1.0+cu130" -> "2.9.1".
std::string PublicCanonical(Pep440Version version) {
  version.local.clear();
  return version.Canonical();
}

}  // namespace

absl::StatusOr<WheelFilename> CheckBuiltWheelName(absl::string_view filename,
                                                  absl::string_view package,
                                                  absl::string_view version) {
  auto parsed = ParseWheelFilename(filename);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the build's wheel is refused: ", parsed.status().message(),
                     ". Fix: build a wheel with a standard name (a PEP 427 build backend such "
                     "as setuptools or pip wheel names it so)"));
  }
  auto built = ParsePep440Version(version);
  if (!built.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the build's own version: ", built.status().message()));
  }
  // The name parsed, so its version is PEP 440.
  const Pep440Version wheel_version = *ParsePep440Version(parsed->version);
  const std::string wheel_name = NormalizeProjectName(parsed->distribution);
  if (wheel_name != NormalizeProjectName(package) ||
      PublicCanonical(wheel_version) != PublicCanonical(*built)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the build of ", package, " ", version, " produced ", filename, ", a wheel of ", wheel_name,
        " ", wheel_version.Normalized(),
        ": a build publishes only its own package and version (a local label such as +cu130 "
        "aside). Fix: give the project the name ",
        NormalizeProjectName(package), " and the version ", version,
        " in its build files, or build ", wheel_name, " with a recipe of its own"));
  }
  return parsed;
}

absl::Status CheckBuiltWheel(const std::string& path, absl::string_view filename,
                             absl::string_view package, absl::string_view version) {
  auto name = CheckBuiltWheelName(filename, package, version);
  if (!name.ok()) return name.status();
  auto wheel = ReadWheelPackage(path, filename);
  if (!wheel.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the build's wheel does not describe itself: ", wheel.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace farm::coordinator
