// Where each build dependency of a planned wheel build comes from. A recipe's [python]
// requirements come from the build host's package index (PyPI, or its PIP_INDEX_URL); its
// farm_requirements ("torch==2.9.1") from the farm itself: a wheel of that project and version
// that the farm built for the same CPU arch, CUDA release (major.minor) and arch set, and
// published to its built-in index, installed from that arch set's index
// (libfarm/recipes/farm_requirement.h). Resolved at plan time, so a build whose farm wheel does
// not exist is refused before anything is queued, naming the fix, unless the recipe names a
// fallback for it ([python.farm_fallback.torch]: a package index and the CUDA release its
// wheels were built for): then the plan says the wheel comes from that index, and why, and
// the build host installs it from there.
//
// Decisions:
// - "The same arch set" is the set the user asked for (`--archs`, the plan's requested set):
//   a stack is built for one GPU set, and a package with [archs] rules (flash-attn: 12.1 is
//   built as sm_120) still takes the torch built for 12.1.
// - The wheel must run on the dependent's Python: a farm wheel's tags say so (py3, or cpXY of
//   the build's Python); a wheel a stack has yet to build must be for the same Python.
// - An earlier build of the same stack counts before a published one: the stack was asked to
//   build it, so its dependents use that build.
// - Of several published builds, the newest that matches.
// - The farm's wheel before the fallback's, always: the fallback is for when there is none.
// - A fallback whose CUDA major differs from this build's toolkit is refused, not taken: the
//   build would fail on the build host (cpp_extension), after the queue and the clone.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/wheels/build_planner.h"
#include "farm/v1/actions.pb.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/recipes/recipe_loader.h"

namespace farm::coordinator {

// A package a stack builds before the one being planned.
struct StackPlanned {
  std::string ref;  // "pytorch-2.9.1", as submitted
  farm::v1::BuildPlan plan;
};

struct DependencySources {
  const std::vector<farm::v1::Build>* builds = nullptr;  // the farm's builds, newest first
  std::vector<StackPlanned> stack;                       // earlier packages of this stack
  // The coordinator serves its index over HTTP (--http-listen); without it build hosts
  // cannot install farm wheels.
  bool index_served = true;
  const RecipeDirectory* recipes = nullptr;  // for the fix: which recipe builds a project
  std::string ref;                           // the planned build's "torchvision-0.24.1"
};

struct ResolvedDependencies {
  // For the build host, in the recipe's order: farm wheels, and fallbacks from a package index.
  std::vector<farm::v1::FarmWheel> farm_wheels;
  std::vector<size_t> stack_indexes;  // of DependencySources::stack that this build waits for
};

// Fills planned.plan.build_dependencies. FAILED_PRECONDITION when a farm requirement has no
// wheel and no fallback: what the farm has of it (if anything) and the fix (build it first,
// as a stack, or declare a fallback); or when its fallback's wheels are for another CUDA
// major than planned.cuda, naming both releases and the fix.
absl::StatusOr<ResolvedDependencies> ResolveBuildDependencies(PlannedBuild& planned,
                                                              const DependencySources& sources);

// The arch set a plan was asked for, "sm75-sm90" (requested_archs, else archs).
std::string RequestedArchSet(const farm::v1::BuildPlan& plan);

}  // namespace farm::coordinator
