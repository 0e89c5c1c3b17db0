#include "coordinator/wheels/build_dependencies.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "libfarm/cuda/arch_set_label.h"
#include "libfarm/publish/core_metadata.h"
#include "libfarm/recipes/farm_requirement.h"
#include "libfarm/recipes/python_environment.h"
#include "libfarm/wheel/wheel_filename.h"

namespace farm::coordinator {
namespace {

// "/sm75-sm90/simple/".
std::string IndexPath(const std::string& arch_set) {
  return absl::StrCat("/", arch_set, "/simple/");
}

// Whether a wheel with these Python tags installs on python{version} ("3.11"): py3, py311 or
// cp311 (a farm wheel's ABI follows its Python tag).
bool RunsOnPython(const std::vector<std::string>& tags, const std::string& version) {
  const std::string digits = absl::StrReplaceAll(version, {{".", ""}});
  for (const std::string& t : tags) {
    if (t == "py3" || t == absl::StrCat("py", digits) || t == absl::StrCat("cp", digits)) {
      return true;
    }
  }
  return false;
}

bool SameCudaRelease(const std::string& a, const std::string& b) {
  auto x = ParseToolkitVersion(a);
  auto y = ParseToolkitVersion(b);
  return x.ok() && y.ok() && x->major == y->major && x->minor == y->minor;
}

// Why a build of the right project and version is not the wheel this plan needs; "" when it
// is.
std::string Mismatch(const farm::v1::BuildPlan& dependency, const farm::v1::BuildPlan& plan) {
  std::vector<std::string> why;
  if (dependency.cpu_arch() != plan.cpu_arch()) {
    why.push_back(
        absl::StrCat("it is for ", dependency.cpu_arch(), ", this build ", plan.cpu_arch()));
  }
  if (!SameCudaRelease(dependency.cuda_version(), plan.cuda_version())) {
    why.push_back(absl::StrCat("it was built with CUDA ", dependency.cuda_version(),
                               ", this build uses ", plan.cuda_version()));
  }
  if (RequestedArchSet(dependency) != RequestedArchSet(plan)) {
    why.push_back(absl::StrCat("it is for the arch set ", RequestedArchSet(dependency),
                               ", this build for ", RequestedArchSet(plan)));
  }
  return absl::StrJoin(why, ", ");
}

// The recipe reference that builds `requirement`'s project and version ("pytorch-2.9.1"), or
// "" when no loaded recipe does.
std::string RecipeBuilding(const FarmRequirement& requirement, const RecipeDirectory* recipes) {
  if (recipes == nullptr) return "";
  for (const Recipe& r : recipes->recipes) {
    for (const RecipeVersion& v : r.versions) {
      if (FarmRequirementMatches(requirement, r.package, v.version)) {
        return absl::StrCat(r.name, "-", v.version);
      }
    }
  }
  return "";
}

std::string ArchsFlag(const farm::v1::BuildPlan& plan) {
  return absl::StrCat("--archs \"",
                      plan.requested_archs().empty() ? plan.archs() : plan.requested_archs(), "\"");
}

}  // namespace

std::string RequestedArchSet(const farm::v1::BuildPlan& plan) {
  auto archs =
      ParseArchList(plan.requested_archs().empty() ? plan.archs() : plan.requested_archs());
  return archs.ok() ? ArchSetName(*archs) : plan.archs();
}

absl::StatusOr<ResolvedDependencies> ResolveBuildDependencies(PlannedBuild& planned,
                                                              const DependencySources& sources) {
  farm::v1::BuildPlan& plan = planned.plan;
  const Recipe& recipe = *planned.recipe;
  ResolvedDependencies out;
  for (const std::string& r : recipe.python_requirements) {
    farm::v1::BuildDependencyPlan* d = plan.add_build_dependencies();
    d->set_requirement(r);
    d->set_source("index");
  }
  if (!recipe.farm_requirements.empty() && !sources.index_served) {
    return absl::FailedPreconditionError(absl::StrCat(
        "recipe '", recipe.name,
        "' installs farm wheels (farm_requirements = ", recipe.farm_requirements.front().Text(),
        ", ...) from the coordinator's built-in index, and this coordinator serves no HTTP. Fix: "
        "start the coordinator with --http-listen HOST:PORT (its index is what build hosts "
        "install farm wheels from)"));
  }
  for (const FarmRequirement& requirement : recipe.farm_requirements) {
    farm::v1::BuildDependencyPlan* d = plan.add_build_dependencies();
    d->set_requirement(requirement.Text());
    d->set_project(requirement.project);
    std::vector<std::string> seen;  // what the farm has of this project and version
    bool found = false;
    // An earlier build of this stack first: the stack was asked to build it.
    for (size_t i = 0; i < sources.stack.size() && !found; ++i) {
      const farm::v1::BuildPlan& dep = sources.stack[i].plan;
      if (!FarmRequirementMatches(requirement, dep.package(), dep.version())) continue;
      std::string why = Mismatch(dep, plan);
      if (why.empty() && dep.python_version() != plan.python_version()) {
        why = absl::StrCat("it is built for Python ", dep.python_version(), ", this build for ",
                           plan.python_version());
      }
      const bool builtin = std::any_of(dep.publish().begin(), dep.publish().end(),
                                       [](const auto& t) { return t.kind() == "builtin"; });
      if (why.empty() && !builtin) why = "its recipe does not publish to the built-in index";
      if (!why.empty()) {
        seen.push_back(absl::StrCat("this stack's ", sources.stack[i].ref, ": ", why));
        continue;
      }
      auto cuda = ParseToolkitVersion(dep.cuda_version());
      auto archs = ParseArchList(dep.archs());
      if (!cuda.ok() || !archs.ok()) continue;
      d->set_source("stack");
      d->set_stack_recipe(sources.stack[i].ref);
      d->set_wheel_version(WithFarmLocalLabel(dep.version(), *cuda, *archs));
      d->set_index_path(IndexPath(ArchSetName(*archs)));
      out.stack_indexes.push_back(i);
      found = true;
    }
    // Then what the farm built and published to its index, newest first.
    if (!found && sources.builds != nullptr) {
      for (const farm::v1::Build& b : *sources.builds) {
        if (b.kind() != farm::v1::BUILD_KIND_WHEEL ||
            b.state() != farm::v1::BUILD_STATE_SUCCEEDED ||
            !FarmRequirementMatches(requirement, b.plan().package(), b.plan().version())) {
          continue;
        }
        const bool in_index = std::any_of(
            b.published_to().begin(), b.published_to().end(),
            [](const std::string& where) { return where.find("/files/") != std::string::npos; });
        auto name = ParseWheelFilename(b.wheel().filename());
        if (!in_index || !name.ok()) continue;  // published elsewhere only: not installable here
        const std::optional<std::string> set = ArchSetNameOfVersion(name->version);
        if (!set) continue;  // published before arch sets: no label to pin
        std::string why = Mismatch(b.plan(), plan);
        if (why.empty() && !RunsOnPython(name->python_tags, plan.python_version())) {
          why = absl::StrCat("its tags (", absl::StrJoin(name->python_tags, "."),
                             ") do not run on Python ", plan.python_version());
        }
        if (!why.empty()) {
          seen.push_back(absl::StrCat(name->version, " (build ", b.id(), "): ", why));
          continue;
        }
        d->set_source("farm");
        d->set_build_id(b.id());
        d->set_wheel_version(name->version);
        d->set_index_path(IndexPath(*set));
        found = true;
        break;
      }
    }
    if (!found) {
      const std::string builder = RecipeBuilding(requirement, sources.recipes);
      const std::string flags = ArchsFlag(plan);
      std::string fix = builder.empty()
                            ? absl::StrCat("add a recipe that builds ", requirement.Text(),
                                           " and submit it first with ", flags)
                            : absl::StrCat("farmctl submit ", builder, " ", flags,
                                           " first, or submit them as "
                                           "a stack: farmctl submit ",
                                           builder, " ", sources.ref, " ", flags);
      absl::StrAppend(&fix, "; or take it from a package index instead: move \"",
                      requirement.Text(), "\" from farm_requirements to requirements in ",
                      recipe.file, " (the build host's PIP_INDEX_URL names the index)");
      return absl::FailedPreconditionError(absl::StrCat(
          "the farm has no ", requirement.Text(), " wheel for this build (", plan.cpu_arch(),
          ", CUDA ", plan.cuda_version(), ", arch set ", RequestedArchSet(plan), ", Python ",
          plan.python_version(), "), which recipe '", recipe.name,
          "' installs from the farm's index (farm_requirements)",
          seen.empty() ? std::string("; the farm has built none of that version")
                       : absl::StrCat("; the farm has ", absl::StrJoin(seen, "; ")),
          ". Fix: ", fix));
    }
    farm::v1::FarmWheel* wheel = &out.farm_wheels.emplace_back();
    wheel->set_requirement(absl::StrCat(requirement.project, "==", d->wheel_version()));
    wheel->set_index_path(d->index_path());
    wheel->set_origin(d->source() == "farm" ? absl::StrCat("build ", d->build_id())
                                            : absl::StrCat("this stack's ", d->stack_recipe()));
  }
  if (!out.farm_wheels.empty()) {
    // The farm wheels are part of the environment the build host makes and caches.
    auto contents = EnvironmentContentsFor(recipe, planned.cuda);
    if (!contents.ok()) return contents.status();
    for (const auto& w : out.farm_wheels) {
      contents->farm_wheels.push_back(FarmWheelEntry(w.requirement(), w.index_path()));
    }
    plan.set_requirements_hash(EnvironmentContentsHash(*contents));
  }
  return out;
}

}  // namespace farm::coordinator
