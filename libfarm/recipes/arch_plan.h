// A recipe's [archs] rules applied to a requested arch list: what the build compiles for
// each requested GPU, or why the package cannot serve it. Checked when a build is planned,
// so a refusal comes before anything is queued.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/cuda/arch_compat.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/recipes/recipe.h"

namespace farm {

struct ArchPlan {
  ArchList planned;               // what the build compiles: fills {archs}, {cmake_archs} ...
  std::vector<ArchRoute> routes;  // per requested arch, in the request's order
};

// Without rules (no [archs] table) the plan is the request itself. FAILED_PRECONDITION,
// naming the package, the arch, what the package supports and the fix, when a requested arch
// is below archs.min, served by no buildable arch, asks for PTX the package does not emit,
// or mixes archs across archs.split_below.
absl::StatusOr<ArchPlan> PlanArchs(const Recipe& recipe, const ArchList& requested);

// "sm_80, sm_90, sm_100, sm_120", or "any arch the toolkit compiles".
std::string BuildableDescription(const ArchRules& rules);

}  // namespace farm
