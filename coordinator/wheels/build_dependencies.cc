#include "coordinator/wheels/build_dependencies.h"

#include <algorithm>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "libfarm/cuda/arch_set_label.h"
#include "libfarm/publish/core_metadata.h"
#include "libfarm/recipes/farm_requirement.h"
#include "libfarm/recipes/python_environment.h"
#include "libfarm/status/status_macros.h"
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

// The fix that builds `requirement` on the farm before `plan`'s build: the recipe that builds
// it, first or as a stack, or a recipe to add.
std::string BuildItFirst(const FarmRequirement& requirement, const DependencySources& sources,
                         const farm::v1::BuildPlan& plan) {
  const std::string builder = RecipeBuilding(requirement, sources.recipes);
  const std::string flags = ArchsFlag(plan);
  if (builder.empty()) {
    return absl::StrCat("add a recipe that builds ", requirement.Text(),
                        " and submit it first with ", flags);
  }
  return absl::StrCat("farmctl submit ", builder, " ", flags,
                      " first, or submit them as a stack: farmctl submit ", builder, " ",
                      sources.ref, " ", flags);
}

// A fallback's wheels must be built for the CUDA major of this build's toolkit: a package
// built against them with nvcc of another major is refused (torch.utils.cpp_extension checks
// the major) or links against the other major's runtime. FAILED_PRECONDITION naming both
// releases and the fixes otherwise.
absl::Status CheckFallbackCuda(const FarmRequirement& requirement, const Recipe& recipe,
                               const ToolkitVersion& toolkit, const std::string& missing,
                               const std::string& build_it) {
  const FarmFallback& fallback = *requirement.fallback;
  if (fallback.cuda.major == toolkit.major) return absl::OkStatus();
  std::string fix = absl::StrCat("build it on the farm: ", build_it, "; or name in [python.",
                                 "farm_fallback.", requirement.project,
                                 "] an index whose wheels are built for CUDA ", toolkit.major);
  // Another toolkit only where the recipe's range has one of the fallback's major.
  const CudaRange& range = recipe.platform.cuda;
  if (range.min.major <= fallback.cuda.major && fallback.cuda.major <= range.max.major) {
    absl::StrAppend(&fix, "; or give the build a CUDA ", fallback.cuda.major, " toolkit: ",
                    fallback.cuda.major < toolkit.major
                        ? absl::StrCat("lower [platform] cuda_max in ", recipe.file, " below ",
                                       toolkit.major, ".0")
                        : absl::StrCat("raise [platform] cuda_min in ", recipe.file, " to ",
                                       fallback.cuda.major, ".0"),
                    " (the recipe allows ", range.min.ToString(), " to ", range.max.ToString(),
                    "; a build host needs that toolkit, and the archs must build with it)");
  }
  std::string sentence = missing;  // "the farm has no ...", starting a sentence here
  if (!sentence.empty()) sentence[0] = absl::ascii_toupper(static_cast<unsigned char>(sentence[0]));
  return absl::FailedPreconditionError(absl::StrCat(
      "recipe '", recipe.name, "' takes ", requirement.Text(), " from ",
      FallbackIndexName(fallback.index_url), " ([python.farm_fallback.", requirement.project,
      "] in ", recipe.file, ") when the farm has none, and that index's wheels were built for ",
      "CUDA ", fallback.cuda.ToString(), " while this build's toolkit is CUDA ", toolkit.ToString(),
      ": a package built with nvcc ", toolkit.major, " against a wheel of CUDA ",
      fallback.cuda.major, " does not work (torch.utils.cpp_extension refuses the pair). ",
      sentence, ". Fix: ", fix));
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
  for (const FarmRequirement& requirement : recipe.farm_requirements) {
    if (!sources.index_served && !requirement.fallback) {
      return absl::FailedPreconditionError(absl::StrCat(
          "recipe '", recipe.name,
          "' installs farm wheels (farm_requirements = ", requirement.Text(),
          ", ...) from the coordinator's built-in index, and this coordinator serves no HTTP. "
          "Fix: start the coordinator with --http-listen HOST:PORT (its index is what build "
          "hosts install farm wheels from)"));
    }
    farm::v1::BuildDependencyPlan* d = plan.add_build_dependencies();
    d->set_requirement(requirement.Text());
    d->set_project(requirement.project);
    std::vector<std::string> seen;  // what the farm has of this project and version
    bool found = false;
    // An earlier build of this stack first: the stack was asked to build it. Without an
    // index served, no farm wheel is installable: only the fallback is left.
    for (size_t i = 0; i < sources.stack.size() && !found && sources.index_served; ++i) {
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
    if (!found && sources.builds != nullptr && sources.index_served) {
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
    if (found) {
      farm::v1::FarmWheel* wheel = &out.farm_wheels.emplace_back();
      wheel->set_requirement(absl::StrCat(requirement.project, "==", d->wheel_version()));
      wheel->set_index_path(d->index_path());
      wheel->set_origin(d->source() == "farm" ? absl::StrCat("build ", d->build_id())
                                              : absl::StrCat("this stack's ", d->stack_recipe()));
      continue;
    }
    // What is missing, for the plan (a fallback) or the refusal.
    const std::string missing =
        absl::StrCat("the farm has no ", requirement.Text(), " wheel for this build (",
                     plan.cpu_arch(), ", CUDA ", plan.cuda_version(), ", arch set ",
                     RequestedArchSet(plan), ", Python ", plan.python_version(), ")");
    const std::string has =
        !sources.index_served
            ? std::string(
                  "; this coordinator serves no index (no --http-listen) to install one from")
        : seen.empty() ? std::string("; the farm has built none of that version")
                       : absl::StrCat("; the farm has ", absl::StrJoin(seen, "; "));
    const std::string build_it = BuildItFirst(requirement, sources, plan);
    if (requirement.fallback) {
      FARM_RETURN_IF_ERROR(CheckFallbackCuda(requirement, recipe, planned.cuda,
                                             absl::StrCat(missing, has), build_it));
      const FarmFallback& fallback = *requirement.fallback;
      d->set_source("index");
      d->set_index_url(fallback.index_url);
      d->set_fallback_cuda(fallback.cuda.ToString());
      d->set_fallback_reason(absl::StrCat(missing, has));
      farm::v1::FarmWheel* wheel = &out.farm_wheels.emplace_back();
      wheel->set_requirement(requirement.Text());
      wheel->set_from_package_index(true);
      wheel->set_package_index_url(fallback.index_url);
      wheel->set_cuda_version(fallback.cuda.ToString());
      wheel->set_origin(
          absl::StrCat("the recipe's [python.farm_fallback.", requirement.project, "]: ", missing));
      continue;
    }
    return absl::FailedPreconditionError(absl::StrCat(
        missing, ", which recipe '", recipe.name,
        "' installs from the farm's index (farm_requirements)", has, ". Fix: ", build_it,
        "; or let a package index supply it when the farm has none: add "
        "[python.farm_fallback.",
        requirement.project, "] to ", recipe.file,
        " with index = \"URL\" (left out: the build host's package index) and cuda = the CUDA "
        "release that index's wheels were built for, which must be a CUDA ",
        planned.cuda.major, " release like this build's toolkit (", plan.cuda_version(), ")"));
  }
  if (!out.farm_wheels.empty()) {
    // The farm wheels (and fallbacks) are part of the environment the build host makes and
    // caches.
    auto contents = EnvironmentContentsFor(recipe, planned.cuda);
    if (!contents.ok()) return contents.status();
    for (const auto& w : out.farm_wheels) contents->farm_wheels.push_back(FarmWheelEntry(w));
    plan.set_requirements_hash(EnvironmentContentsHash(*contents));
  }
  return out;
}

}  // namespace farm::coordinator
