#include "worker/wheel_prerequisites.h"

#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/recipes/placeholders.h"
#include "libfarm/versions/version_specifier.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

// PEP 503 normalization: "Nvidia_NCCL.cu13" and "nvidia-nccl-cu13" are one project.
std::string NormalizedProject(absl::string_view name) {
  std::string out;
  for (char c : name) {
    const bool sep = c == '-' || c == '_' || c == '.';
    if (sep) {
      if (out.empty() || out.back() != '-') out.push_back('-');
    } else {
      out.push_back(absl::ascii_tolower(c));
    }
  }
  return out;
}

absl::Status Missing(const Recipe& recipe, const Prerequisite& p, absl::string_view what,
                     absl::string_view fix) {
  return absl::FailedPreconditionError(absl::StrCat("prerequisite ", p.name, ": ", what, " (",
                                                    DescribePrerequisite(p, recipe.file),
                                                    "). Fix: ", fix));
}

// The paths a prerequisite's variables name: each ':'-separated part of a value that is an
// absolute path once its placeholders are filled ("1" and "ON" are not paths).
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> NamedPaths(
    const Prerequisite& p, const std::map<std::string, std::string>& values) {
  std::vector<std::pair<std::string, std::string>> out;  // variable, path
  for (const auto& [var, value] : p.env) {
    auto expanded = ExpandPlaceholders(value, values);
    if (!expanded.ok()) return expanded.status();
    for (absl::string_view part : absl::StrSplit(*expanded, ':', absl::SkipEmpty())) {
      if (absl::StartsWith(part, "/")) out.emplace_back(var, std::string(part));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> SitePackagesOf(const std::string& env_dir) {
  // -I: no user site, no PYTHON* variables; the venv's own answer.
  auto r = RunCommand({env_dir + "/bin/python", "-I", "-c",
                       "import sysconfig; print(sysconfig.get_paths()['purelib'])"},
                      absl::Seconds(30));
  if (!r.ok()) return r.status();
  const std::string path(absl::StripAsciiWhitespace(r->stdout_text));
  if (r->exit_code != 0 || path.empty() || path[0] != '/') {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot ask ", env_dir, "/bin/python for its site-packages (exit ",
                     r->exit_code, "): ", absl::StripAsciiWhitespace(r->stderr_text)));
  }
  return path;
}

absl::StatusOr<std::string> InstalledVersion(const std::string& site_packages,
                                             const std::string& project) {
  const std::string wanted = NormalizedProject(project);
  std::error_code ec;
  for (fs::directory_iterator it(site_packages, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    absl::string_view name = file;
    if (!absl::ConsumeSuffix(&name, ".dist-info")) continue;
    // "{name}-{version}": a dist-info name escapes '-' in both parts to '_'.
    const size_t dash = name.find('-');
    if (dash == absl::string_view::npos) continue;
    if (NormalizedProject(name.substr(0, dash)) == wanted) {
      return std::string(name.substr(dash + 1));
    }
  }
  return absl::NotFoundError(absl::StrCat("no ", project, " is installed in ", site_packages));
}

absl::StatusOr<std::vector<std::string>> SetUpPrerequisites(const Recipe& recipe,
                                                            const PrerequisiteValues& values) {
  const std::map<std::string, std::string> placeholders = PrerequisitePlaceholderValues(values);
  std::vector<std::string> lines;
  for (const Prerequisite& p : recipe.prerequisites) {
    std::string source, project;
    if (p.FromWheel()) {
      auto requirement = PrerequisiteWheelFor(p, values.cuda);
      if (!requirement.ok()) return requirement.status();
      auto name = RequirementProjectName(*requirement);
      if (!name.ok()) return name.status();
      project = *name;
      auto version = InstalledVersion(values.site_packages, project);
      if (!version.ok()) {
        return Missing(recipe, p,
                       absl::StrCat("pip installed ", *requirement, " but ", project, " is not in ",
                                    values.site_packages),
                       "check that the requirement names the wheel that provides it");
      }
      if (!p.version.empty()) {
        auto spec = VersionSpecifier::Parse(p.version);
        if (!spec.ok()) return spec.status();
        auto matches = spec->Matches(*version);
        if (!matches.ok() || !*matches) {
          return Missing(recipe, p,
                         absl::StrCat(project, " ", *version, " was installed, and ", p.name, " ",
                                      p.version, " is needed"),
                         absl::StrCat("give the wheel requirement a version that matches (",
                                      project, p.version, ")"));
        }
      }
      for (const std::string& versioned : p.linker_names) {
        auto target = ExpandPlaceholders(versioned, placeholders);
        if (!target.ok()) return target.status();
        auto link = LinkerNameFor(*target);
        if (!link.ok()) return link.status();
        std::error_code ec;
        if (!fs::exists(*target, ec)) {
          return Missing(recipe, p,
                         absl::StrCat(*target, " (linker_names) does not exist after installing ",
                                      *requirement),
                         absl::StrCat("name a library the wheel installs (pip show -f ", project,
                                      " lists them)"));
        }
        // libnccl.so -> libnccl.so.2, beside it: CMake's find_library looks for libX.so.
        if (!fs::exists(fs::symlink_status(*link, ec))) {
          fs::create_symlink(fs::path(*target).filename(), *link, ec);
          if (ec) {
            return absl::InternalError(
                absl::StrCat("cannot add the linker name ", *link, ": ", ec.message()));
          }
        }
      }
      source = absl::StrCat(project, " ", *version, " (wheel)");
    } else {
      source = absl::StrCat(p.host_library, " (this host's)");
    }
    auto paths = NamedPaths(p, placeholders);
    if (!paths.ok()) return paths.status();
    for (const auto& [var, path] : *paths) {
      std::error_code ec;
      if (!fs::exists(path, ec)) {
        return Missing(
            recipe, p, absl::StrCat(var, " names ", path, ", which does not exist"),
            p.FromWheel()
                ? absl::StrCat("point ", var, " at what the wheel installs (pip show -f ", project,
                               " lists it)")
                : absl::StrCat("point ", var, " at where ", p.name, " is on the build hosts"));
      }
    }
    lines.push_back(absl::StrCat("prerequisite ", p.name, p.version.empty() ? "" : " ", p.version,
                                 ": ", source));
  }
  return lines;
}

absl::StatusOr<std::map<std::string, std::string>> PrerequisiteVariables(
    const Recipe& recipe, const PrerequisiteValues& values) {
  const std::map<std::string, std::string> placeholders = PrerequisitePlaceholderValues(values);
  std::map<std::string, std::string> out;
  for (const Prerequisite& p : recipe.prerequisites) {
    for (const auto& [var, value] : p.env) {
      auto expanded = ExpandPlaceholders(value, placeholders);
      if (!expanded.ok()) return expanded.status();
      out[var] = std::move(*expanded);
    }
  }
  return out;
}

}  // namespace farm::worker
