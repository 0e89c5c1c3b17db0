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
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

struct FarmRequirement {
  std::string project;  // as the recipe writes it, "torch"
  std::string version;  // "2.9.1", without a local label
  std::string Text() const { return project + "==" + version; }
};

// INVALID_ARGUMENT, saying how to write one, unless `text` is `NAME==VERSION` with a PEP 503
// project name and a PEP 440 version without a local label.
absl::StatusOr<FarmRequirement> ParseFarmRequirement(absl::string_view text);

// Whether a wheel of `package` at `version` (a recipe version, or a wheel's version with the
// farm's label: its public part is compared) is the one `requirement` names.
bool FarmRequirementMatches(const FarmRequirement& requirement, absl::string_view package,
                            absl::string_view version);

}  // namespace farm
