// Names a recipe's Python build environment. The coordinator shows the requirements' hash in
// a plan and the build host keys its cached virtualenvs by it (with the interpreter), so both
// must compute it the same way: one definition here.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "farm/v1/actions.pb.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/recipes/recipe.h"

namespace farm {

// What a recipe's build environment holds for a build with one toolkit: pip installs
// `requirements` in one resolve (the [python] requirements, then each wheel prerequisite's
// requirement for that toolkit), then the wheel prerequisites' linker names are added.
struct EnvironmentContents {
  std::vector<std::string> requirements;
  std::vector<std::string> linker_names;  // {site_packages} unexpanded
  // The farm's own wheels (farm_requirements), installed first from the farm's index, each
  // FarmWheelEntry(): "torch==2.9.1+cu130.sm75 from /sm75/simple/"; or a farm requirement's
  // fallback from a package index, FallbackWheelEntry().
  std::vector<std::string> farm_wheels;
};

// A farm wheel as the environment's contents name it: its pin and the arch-set index path.
std::string FarmWheelEntry(const std::string& requirement, const std::string& index_path);

// A farm requirement's fallback as the environment's contents name it: its pin and the
// package index ("" = the build host's), so another index makes another environment.
std::string FallbackWheelEntry(const std::string& requirement, const std::string& index_url);

// Either of the above for a planned farm requirement: what the coordinator hashes into the
// plan and the build host into its cache key, so both name it the same way.
std::string FarmWheelEntry(const farm::v1::FarmWheel& wheel);

absl::StatusOr<EnvironmentContents> EnvironmentContentsFor(const Recipe& recipe,
                                                           const ToolkitVersion& cuda);

// 16 hex digits of SHA-256 over the requirement specifiers in order (each length-prefixed, so
// no two lists collide by splitting differently).
std::string PythonRequirementsHash(const std::vector<std::string>& requirements);

// PythonRequirementsHash of the requirements when there are no linker names and no farm wheels
// (a recipe without prerequisites keeps its hash, and its cached environments), else over all.
std::string EnvironmentContentsHash(const EnvironmentContents& contents);

// The cache key of a virtualenv: 24 hex digits over the interpreter it is made from (its
// resolved path and full release, e.g. "3.11.2": a patch upgrade makes a new env) and the
// contents' hash.
std::string PythonEnvironmentKey(const std::string& interpreter_path,
                                 const std::string& interpreter_release,
                                 const EnvironmentContents& contents);
std::string PythonEnvironmentKey(const std::string& interpreter_path,
                                 const std::string& interpreter_release,
                                 const std::vector<std::string>& requirements);

}  // namespace farm
