// A library a recipe's build needs (cuDNN, NCCL, ...) and where it comes from: a wheel pip
// installs into the build environment (nvidia-cudnn-cu13, with the variables the package's
// build reads pointed at its files), or the build host itself (a soname its dynamic loader
// knows, checked against what each worker advertises when the build is planned). Declared in
// a recipe's [[prerequisites]] (recipes/README.md), so a missing library stops a build before
// it starts instead of silently turning a feature off hours into it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/host/shared_libraries.h"  // IsSoname

namespace farm {

struct Prerequisite {
  std::string name;     // "NCCL": what messages and the plan call it
  std::string version;  // PEP 440 specifier (">=2.27"), "" when not given
  // Exactly one of these two says where it comes from.
  std::string wheel;         // a pip requirement ("nvidia-nccl-cu{cuda_major}>=2.27")
  std::string host_library;  // a soname the build host's loader knows ("libcudnn.so.9")
  // Wheel prerequisites: versioned libraries ("{site_packages}/nvidia/nccl/lib/libnccl.so.2")
  // that get their linker name (libnccl.so) beside them, as a -dev package would add: the
  // nvidia-* wheels ship only the versioned file and CMake's find_library looks for libX.so.
  std::vector<std::string> linker_names;
  // Variables the package's build reads, pointed at the prerequisite (placeholders:
  // PrerequisiteEnvPlaceholders()). Applied after [build.env], which may not set them too.
  std::map<std::string, std::string> env;
  int line = 0;  // of its [[prerequisites]] table in the recipe file, for messages

  bool FromWheel() const { return !wheel.empty(); }
  // `wheel = "..."` or `host_library = "..."`, as the recipe writes it.
  std::string SourceText() const;
};

// Placeholders a prerequisite's `wheel` may use: {cuda_major} ("13" with CUDA 13.0), so one
// recipe takes nvidia-nccl-cu12 or -cu13 to match the toolkit its build gets.
const std::vector<std::string>& PrerequisiteWheelPlaceholders();
// Placeholders its `env` values and `linker_names` may use: {site_packages} (the build
// environment's, where wheels land), {cuda_home}, {cuda}, {cuda_major}.
const std::vector<std::string>& PrerequisiteEnvPlaceholders();

// What the placeholders stand for in one build.
struct PrerequisiteValues {
  std::string site_packages;  // the environment's purelib directory
  ToolkitVersion cuda;
  std::string cuda_home;
};
std::map<std::string, std::string> PrerequisitePlaceholderValues(const PrerequisiteValues& values);

// The pip requirement a wheel prerequisite installs when built with CUDA `cuda`.
absl::StatusOr<std::string> PrerequisiteWheelFor(const Prerequisite& prerequisite,
                                                 const ToolkitVersion& cuda);

// The project a pip requirement names ("nvidia-nccl-cu13" of "nvidia-nccl-cu13[x]>=2.27"),
// or INVALID_ARGUMENT when it names none (a path, a URL, an option).
absl::StatusOr<std::string> RequirementProjectName(absl::string_view requirement);

// "/x/libnccl.so.2" -> "/x/libnccl.so"; INVALID_ARGUMENT unless the file name is a versioned
// soname.
absl::StatusOr<std::string> LinkerNameFor(absl::string_view versioned_path);

// `[[prerequisites]] "NCCL" wheel = "..." (recipes/pytorch.toml:57)`: the recipe's line, for
// messages about it.
std::string DescribePrerequisite(const Prerequisite& prerequisite, const std::string& recipe_file);

// The nvidia-* wheel that provides a host library, for the fix in a refusal
// ("nvidia-cudnn-cu13" for libcudnn.so.9 with CUDA 13); "" when the farm knows none.
std::string WheelProviding(absl::string_view soname, const ToolkitVersion& cuda);

}  // namespace farm
