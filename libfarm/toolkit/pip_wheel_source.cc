#include "libfarm/toolkit/pip_wheel_source.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/path_search.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

// A toolkit's largest wheel (nvvm) is ~65 MB; slow mirrors exist.
constexpr absl::Duration kDownloadTimeout = absl::Minutes(30);
constexpr absl::Duration kQueryTimeout = absl::Minutes(3);

// Options every pip call gets: no prompts, no progress bars in farmctl's output.
const std::vector<std::string>& QuietPip() {
  static const std::vector<std::string> options = {"--no-input", "--disable-pip-version-check"};
  return options;
}

}  // namespace

std::string PipErrors(const std::string& output) {
  std::vector<std::string> errors;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "ERROR: ")) errors.emplace_back(line);
  }
  return absl::StrJoin(errors, "; ");
}

std::string PipAvailableVersions(const std::string& output) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "Available versions:")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  return "";
}

absl::StatusOr<std::unique_ptr<PipWheelSource>> PipWheelSource::Find(const std::string& python) {
  std::string interpreter = python;
  if (interpreter.empty()) {
    auto found = FindOnPath("python3", GetEnv("PATH"));
    if (!found) {
      return absl::FailedPreconditionError(
          "no python3 on PATH to run pip, which downloads the toolkit's wheels. Fix: apt-get "
          "install python3-pip, or pass --python with an interpreter that has pip");
    }
    interpreter = *found;
  }
  auto run = RunCommand({interpreter, "-m", "pip", "--version"}, kQueryTimeout);
  if (!run.ok() || run->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no pip for ", interpreter, " (", interpreter, " -m pip --version: ",
        run.ok() ? absl::StripAsciiWhitespace(run->stderr_text) : run.status().message(),
        "); pip downloads the toolkit's wheels. Fix: apt-get install python3-pip, or pass "
        "--python with an interpreter that has pip"));
  }
  return std::unique_ptr<PipWheelSource>(new PipWheelSource(interpreter));
}

absl::StatusOr<std::string> PipWheelSource::Download(const PinnedWheel& wheel,
                                                     const std::string& platform_tag,
                                                     const std::string& dest_dir) {
  const std::string requirement = absl::StrCat(wheel.package, "==", wheel.version);
  std::vector<std::string> argv = {
      python_,      "-m",         "pip",    "download", "--no-deps",      "--only-binary=:all:",
      "--platform", platform_tag, "--dest", dest_dir,   "--progress-bar", "off"};
  argv.insert(argv.end(), QuietPip().begin(), QuietPip().end());
  // After "--": the requirement is never read as an option.
  argv.insert(argv.end(), {"--", requirement});
  auto run = RunCommand(argv, kDownloadTimeout);
  if (!run.ok()) {
    return absl::UnavailableError(absl::StrCat("pip could not download ", requirement, " (",
                                               platform_tag, "): ", run.status().message()));
  }
  if (run->exit_code != 0) {
    const std::string errors = PipErrors(run->stderr_text + run->stdout_text);
    return absl::NotFoundError(absl::StrCat(
        "pip could not download ", requirement, " for ", platform_tag, ": ",
        errors.empty() ? absl::StripAsciiWhitespace(run->stderr_text) : errors,
        ". Fix: check that this host reaches PyPI (or the index PIP_INDEX_URL names) and that ",
        wheel.package, " ", wheel.version, " exists for ", platform_tag));
  }
  std::vector<std::string> wheels;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dest_dir, ec)) {
    if (entry.path().extension() == ".whl") wheels.push_back(entry.path().string());
  }
  if (wheels.size() != 1) {
    return absl::DataLossError(absl::StrCat("pip download of ", requirement, " left ",
                                            wheels.size(), " wheels in ", dest_dir,
                                            ", expected one"));
  }
  return wheels.front();
}

absl::StatusOr<std::string> PipWheelSource::VersionsOnOffer(const std::string& package,
                                                            const std::string& platform_tag) {
  // `pip index versions` is marked experimental, but it lists versions without downloading
  // anything; its output is read for one line only.
  std::vector<std::string> argv = {python_,    "-m",         "pip",        "index",
                                   "versions", "--platform", platform_tag, "--only-binary=:all:"};
  argv.insert(argv.end(), QuietPip().begin(), QuietPip().end());
  argv.insert(argv.end(), {"--", package});
  auto run = RunCommand(argv, kQueryTimeout);
  if (!run.ok()) return run.status();
  const std::string versions = PipAvailableVersions(run->stdout_text);
  if (run->exit_code != 0 || versions.empty()) {
    const std::string errors = PipErrors(run->stderr_text + run->stdout_text);
    return absl::UnavailableError(absl::StrCat(
        "pip index versions ", package,
        " failed: ", errors.empty() ? absl::StripAsciiWhitespace(run->stderr_text) : errors));
  }
  return versions;
}

}  // namespace farm
