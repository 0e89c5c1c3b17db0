// A recipe's prerequisites on the build host, after the environment step installed the wheel
// ones: each linker name added beside its versioned library, every path the prerequisites'
// variables name checked to exist, each wheel's installed version checked against the
// recipe's, and the variables filled in for the build. A prerequisite that is not there fails
// the environment step naming it and its recipe line, so a build never silently goes without
// (PyTorch turns cuDNN off when FindCUDNN finds nothing).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/recipes/prerequisite.h"
#include "libfarm/recipes/recipe.h"

namespace farm::worker {

// The environment's purelib directory, as its own python reports it (sysconfig): where pip put
// the wheels, and what {site_packages} stands for.
absl::StatusOr<std::string> SitePackagesOf(const std::string& env_dir);

// Adds the linker names and checks paths and versions (see above). `values.site_packages` is the
// environment being set up. OK: one line per prerequisite for the build log ("prerequisite NCCL
// >=2.27: nvidia-nccl-cu13 2.27.7 (wheel)"). FAILED_PRECONDITION: the first prerequisite that is
// not in place, with its recipe line and the fix.
absl::StatusOr<std::vector<std::string>> SetUpPrerequisites(const Recipe& recipe,
                                                            const PrerequisiteValues& values);

// The variables the prerequisites set for the build, placeholders filled.
absl::StatusOr<std::map<std::string, std::string>> PrerequisiteVariables(
    const Recipe& recipe, const PrerequisiteValues& values);

// The installed version of `project` in `site_packages`, from its .dist-info directory's name
// (names compared as pip does: case and runs of - _ . do not matter). NOT_FOUND when absent.
absl::StatusOr<std::string> InstalledVersion(const std::string& site_packages,
                                             const std::string& project);

}  // namespace farm::worker
