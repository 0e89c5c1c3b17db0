// A wheel the farm itself built that a recipe's build needs (`[python] farm_requirements =
// ["torch==2.9.1"]`): torchvision builds against the farm's own torch for the same platform,
// CUDA release and arch set, installed from the coordinator's built-in index, never PyPI's
// (whose torch is built for another toolkit and other SMs).
//
// Decisions:
// - One exact version, `NAME==VERSION`: the farm builds versions, not ranges, and the plan
//   names the one wheel the build gets. No local label: the farm adds it (`+cu130.sm75.sm90`,
//   from the dependent build's toolkit and arch set), so a recipe stays valid for every set.
// - The name is compared as pip compares projects (PEP 503), the version as PEP 440 releases
//   ("2.9" is "2.9.0").
// - A fallback (`[python.farm_fallback.torch] index = ..., cuda = "13.0"`) is taken only when
//   the farm has no wheel for the build, and the plan says so. It declares the CUDA release
//   its index's wheels were built for, because that is what decides whether a build can use
//   one: torch.utils.cpp_extension refuses a torch built for another CUDA major than nvcc's
//   (PyPI's torch 2.9.1 is CUDA 12.8, its 2.11.0 CUDA 13.0), so the plan refuses that pair
//   before a build host finds out.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/cuda/arch_list.h"

namespace farm {

// Where a farm requirement comes from when the farm has no wheel of it for the build.
struct FarmFallback {
  // A PEP 503 simple index ("https://download.pytorch.org/whl/cu130"); "": the build host's
  // package index (its PIP_INDEX_URL, else PyPI).
  std::string index_url;
  ToolkitVersion cuda;  // the CUDA release that index's wheels were built for
};

struct FarmRequirement {
  std::string project;                   // as the recipe writes it, "torch"
  std::string version;                   // "2.9.1", without a local label
  std::optional<FarmFallback> fallback;  // [python.farm_fallback.<project>], if any
  std::string Text() const { return project + "==" + version; }
};

// INVALID_ARGUMENT, saying how to write one, unless `text` is `NAME==VERSION` with a PEP 503
// project name and a PEP 440 version without a local label.
absl::StatusOr<FarmRequirement> ParseFarmRequirement(absl::string_view text);

// Whether a wheel of `package` at `version` (a recipe version, or a wheel's version with the
// farm's label: its public part is compared) is the one `requirement` names.
// INVALID_ARGUMENT, saying how to write one, unless `url` is an http:// or https:// URL
// without whitespace (a fallback's `index`).
absl::Status CheckFallbackIndexUrl(absl::string_view url);

// The package index a fallback installs from, for plans and build logs: "the package index
// https://...", or "the build host's package index (PIP_INDEX_URL, else PyPI)".
std::string FallbackIndexName(absl::string_view index_url);

bool FarmRequirementMatches(const FarmRequirement& requirement, absl::string_view package,
                            absl::string_view version);

}  // namespace farm
