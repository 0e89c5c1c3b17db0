// Plans a wheel build from `farmctl submit RECIPE-VERSION --archs ...`: which recipe and
// version, which CUDA toolkit, which hosts may run the build and which workers may compile
// each arch shard. A pure function of the recipes and the online fleet, so a refusal comes
// before anything is queued, naming what to change.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/scheduler/requirements.h"
#include "farm/v1/builds.pb.h"
#include "farm/v1/types.pb.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/recipes/recipe.h"
#include "libfarm/recipes/recipe_loader.h"

namespace farm::coordinator {

struct PlannedBuild {
  farm::v1::BuildPlan plan;
  const Recipe* recipe = nullptr;  // points into the RecipeDirectory planned against
  const RecipeVersion* version = nullptr;
  ArchList archs;
  ToolkitVersion cuda;
  farm::v1::Requirements host_requirements;  // what the build host must offer
  std::string python;  // the recipe's [python] version, or the submit's --python
};

// What a submit may choose beyond the recipe, for this one build.
struct PlanOptions {
  // One of the recipe's platform.cpu_archs; empty: the first an online build host offers.
  std::string cpu_arch;
  // Replaces the recipe's glibc ceiling ("2.36"), for users whose containers are newer (or
  // older) than the recipe assumes; empty: the recipe's.
  std::string glibc_max;
  // The wheel's Python ("3.11"): python{version} on the build host makes its environment;
  // empty: the recipe's [python] version.
  std::string python;
  // The farm's rule for where shards' device compiles may run (the scheduler's).
  PlacementPolicy placement;
};

// NOT_FOUND: unknown recipe or version (listing the known ones). INVALID_ARGUMENT: a
// malformed reference or arch list. FAILED_PRECONDITION: no toolkit the recipe allows builds
// every arch, or no online worker can host the build or compile an arch shard (saying why
// for each worker). INVALID_ARGUMENT also for options the recipe does not allow.
absl::StatusOr<PlannedBuild> PlanWheelBuild(const std::string& recipe_ref,
                                            const std::string& archs_text,
                                            const RecipeDirectory& recipes,
                                            const std::vector<farm::v1::Worker>& online,
                                            const PlanOptions& options = {});

// The shard farm-nvcc files a target's device compiles under ("sm_90a").
std::string ShardName(const CudaTarget& target);

// Where a version's source comes from, for the plan: "git URL at TAG", "sdist P==V from ...".
std::string DescribeSource(const RecipeVersion& version);

}  // namespace farm::coordinator
