#include "coordinator/wheels/build_planner.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/scheduler/requirements.h"
#include "libfarm/recipes/arch_plan.h"
#include "libfarm/recipes/python_environment.h"
#include "libfarm/recipes/recipe_proto.h"
#include "libfarm/recipes/toolkit_choice.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {
namespace {

const Recipe* FindRecipe(const RecipeDirectory& recipes, const std::string& name) {
  for (const Recipe& r : recipes.recipes) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::string RecipeNames(const RecipeDirectory& recipes) {
  std::vector<std::string> names;
  for (const Recipe& r : recipes.recipes) names.push_back(r.name);
  return names.empty() ? "(none loaded)" : absl::StrJoin(names, ", ");
}

// Names of the workers meeting `req`; `why` collects "name: reason" for the others.
std::vector<std::string> Qualifying(const farm::v1::Requirements& req,
                                    const std::vector<farm::v1::Worker>& online,
                                    const PlacementPolicy& placement,
                                    std::vector<std::string>* why) {
  std::vector<std::string> names;
  for (const auto& w : online) {
    absl::Status s = CheckPlacement(req, w.capabilities(), placement);
    if (s.ok()) {
      names.push_back(w.name());
    } else if (why != nullptr) {
      why->push_back(absl::StrCat(w.name(), ": ", s.message()));
    }
  }
  return names;
}

// Why none of `candidates` (they meet the platform) can host the build: python{version} or a
// host_library prerequisite missing. Names each missing prerequisite, what each host lacks,
// and the fix.
absl::Status MissingHostPrerequisites(const Recipe& recipe, const std::string& python,
                                      const ToolkitVersion& cuda,
                                      const std::vector<const farm::v1::Worker*>& candidates) {
  auto has_python = [&](const farm::v1::Worker& w) {
    const auto& pythons = w.capabilities().python();
    return std::any_of(pythons.begin(), pythons.end(),
                       [&](const auto& p) { return p.version() == python; });
  };
  auto has_library = [](const farm::v1::Worker& w, const std::string& lib) {
    const auto& libs = w.capabilities().libraries();
    return std::find(libs.begin(), libs.end(), lib) != libs.end();
  };
  if (std::none_of(candidates.begin(), candidates.end(),
                   [&](const farm::v1::Worker* w) { return has_python(*w); })) {
    std::vector<std::string> versions;
    for (const auto* w : candidates) {
      versions.push_back(absl::StrCat(w->name(), ": ", PythonVersions(w->capabilities())));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "no build host has python", python, " (", absl::StrJoin(versions, "; "),
        "). Fix: install python", python,
        " on a build host (a worker finds it in /usr/local/bin, /usr/bin, on PATH or under "
        "~/.pyenv/versions when it starts, so restart the worker after installing)"));
  }
  // Per host what it lacks; the prerequisites no host with the interpreter has.
  std::vector<std::string> lacks;
  std::vector<const Prerequisite*> nowhere;
  for (const Prerequisite& p : recipe.prerequisites) {
    if (p.FromWheel()) continue;
    if (std::none_of(candidates.begin(), candidates.end(), [&](const farm::v1::Worker* w) {
          return has_python(*w) && has_library(*w, p.host_library);
        })) {
      nowhere.push_back(&p);
    }
  }
  for (const auto* w : candidates) {
    std::vector<std::string> missing;
    for (const Prerequisite& p : recipe.prerequisites) {
      if (!p.FromWheel() && !has_library(*w, p.host_library)) missing.push_back(p.host_library);
    }
    std::string line = w->name();
    if (!has_python(*w)) absl::StrAppend(&line, " has no python", python);
    if (!missing.empty()) {
      absl::StrAppend(&line, has_python(*w) ? "" : " and", " lacks ", absl::StrJoin(missing, ", "));
    }
    lacks.push_back(line);
  }
  // Without a prerequisite missing everywhere, each host lacks a different one: name them all.
  std::vector<const Prerequisite*> named = nowhere;
  if (named.empty()) {
    for (const Prerequisite& p : recipe.prerequisites) {
      if (!p.FromWheel()) named.push_back(&p);
    }
  }
  std::vector<std::string> names, fixes;
  for (const Prerequisite* p : named) {
    names.push_back(
        absl::StrCat(p->name, ", ", p->SourceText(), " (", recipe.file, ":", p->line, ")"));
    const std::string wheel = WheelProviding(p->host_library, cuda);
    fixes.push_back(absl::StrCat(
        "install ", p->name, " on a build host so its dynamic loader lists ", p->host_library,
        " (`ldconfig -p`; restart the worker after installing), or take it from a wheel: "
        "wheel = \"",
        wheel.empty() ? "<pip requirement>" : wheel, "\" instead of host_library in its table"));
  }
  const std::string what =
      nowhere.empty()
          ? absl::StrCat("every host_library prerequisite (", absl::StrJoin(names, "; "), ")")
          : absl::StrCat("the prerequisite", named.size() > 1 ? "s " : " ",
                         absl::StrJoin(names, "; "));
  return absl::FailedPreconditionError(absl::StrCat("no build host has ", what, ": ",
                                                    absl::StrJoin(lacks, "; "),
                                                    ". Fix: ", absl::StrJoin(fixes, "; ")));
}

}  // namespace

std::string ShardName(const CudaTarget& target) { return target.SmName(); }

std::string DescribeSource(const RecipeVersion& version) {
  const RecipeSource& s = version.source;
  if (s.kind == RecipeSource::Kind::kGit) {
    return absl::StrCat("git ", s.git_url, " at ", s.TagFor(version.version));
  }
  if (s.kind == RecipeSource::Kind::kPypi) {
    return absl::StrCat("sdist ", s.pypi_project, "==", version.version, " from ",
                        s.pypi_index.empty() ? "the build host's index" : s.pypi_index,
                        " (sha256-checked; built without network)");
  }
  if (s.kind == RecipeSource::Kind::kArchive) {
    return absl::StrCat("archive ", s.ArchiveUrlFor(version.version), " (",
                        s.archive_sha256.empty()
                            ? "no sha256 in the recipe: the build log says what it fetched"
                            : absl::StrCat("sha256 ", s.archive_sha256),
                        "; built without network)");
  }
  return s.default_dir.empty() ? "upload (--source DIR)"
                               : absl::StrCat("the recipe's tree ", s.default_dir);
}

absl::StatusOr<PlannedBuild> PlanWheelBuild(const std::string& recipe_ref,
                                            const std::string& archs_text,
                                            const RecipeDirectory& recipes,
                                            const std::vector<farm::v1::Worker>& online,
                                            const PlanOptions& options) {
  FARM_ASSIGN_OR_RETURN(const RecipeRef ref, ParseRecipeRef(recipe_ref));
  PlannedBuild out;
  out.recipe = FindRecipe(recipes, ref.name);
  if (out.recipe == nullptr) {
    return absl::NotFoundError(absl::StrCat("no recipe named '", ref.name,
                                            "'; the coordinator has: ", RecipeNames(recipes),
                                            ". Fix: see 'farmctl recipes'"));
  }
  const RecipeVersion* version = out.recipe->FindVersion(ref.version);
  if (version == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "recipe '", out.recipe->name, "' has no version '", ref.version, "'; it builds ",
        absl::StrJoin(out.recipe->VersionNames(), ", "), ". Fix: add the version to ",
        out.recipe->file));
  }
  // A version whose table overrides [python] or [build.env] builds with its own recipe.
  out.recipe = &out.recipe->ForVersion(*version);
  out.version = out.recipe->FindVersion(ref.version);
  const Recipe& recipe = *out.recipe;
  std::vector<std::string> cpu_archs = recipe.platform.cpu_archs;
  if (!options.cpu_arch.empty()) {
    if (std::find(cpu_archs.begin(), cpu_archs.end(), options.cpu_arch) == cpu_archs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "recipe '", recipe.name, "' builds wheels for ", absl::StrJoin(cpu_archs, ", "), ", not ",
          options.cpu_arch, ". Fix: pass --cpu-arch ", absl::StrJoin(cpu_archs, " or --cpu-arch "),
          ", or add ", options.cpu_arch, " to platform.cpu_archs in ", recipe.file));
    }
    cpu_archs = {options.cpu_arch};
  }
  DottedVersion glibc_max = recipe.platform.glibc_max;
  if (!options.glibc_max.empty()) {
    auto ceiling = ParseGlibcCeiling(options.glibc_max);
    if (!ceiling.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--glibc-max ", ceiling.status().message()));
    }
    glibc_max = *ceiling;
  }
  out.python = options.python.empty() ? recipe.python : options.python;
  if (absl::Status s = CheckPythonVersion(out.python); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--python ", s.message()));
  }
  if (archs_text.empty()) {
    return absl::InvalidArgumentError(
        "no archs given. Fix: pass --archs, e.g. --archs \"7.5;9.0;12.1\"");
  }
  FARM_ASSIGN_OR_RETURN(const ArchList requested, ParseArchList(archs_text));
  // The package's own arch rules: what it compiles for each requested GPU, or why it cannot.
  FARM_ASSIGN_OR_RETURN(const ArchPlan arch_plan, PlanArchs(recipe, requested));
  out.archs = arch_plan.planned;

  if (auto feasible = FeasibleToolkits(out.archs, recipe.platform.cuda); !feasible.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("recipe '", recipe.name, "' cannot build ",
                                                      out.archs.ToString(), ": ",
                                                      feasible.status().message()));
  }
  if (online.empty()) {
    return absl::FailedPreconditionError(
        "no worker is online. Fix: start workers ('farmctl up' for a local farm)");
  }
  FARM_ASSIGN_OR_RETURN(const ToolkitChoice choice,
                        ChooseToolkit(out.archs, recipe.platform.cuda, online));
  out.cuda = choice.version;

  farm::v1::BuildPlan& plan = out.plan;
  plan.set_recipe(recipe.name);
  plan.set_package(recipe.package);
  plan.set_version(out.version->version);
  plan.set_archs(out.archs.ToString());
  if (!recipe.archs.Empty()) {
    plan.set_requested_archs(requested.ToString());
    for (const ArchRoute& route : arch_plan.routes) plan.add_arch_routes(route.Describe());
  }
  plan.set_cuda_version(out.cuda.ToString());
  plan.set_glibc_max(glibc_max.ToString());
  plan.set_recipe_glibc_max(recipe.platform.glibc_max.ToString());
  plan.set_source(DescribeSource(*out.version));

  // The build host: the first CPU arch of the policy that an online worker offers, among the
  // workers with the recipe's python{version} (its build environment is made from it) and
  // every host_library prerequisite.
  std::vector<std::string> why;
  std::vector<const farm::v1::Worker*> platform_ok;  // meet the platform, maybe not the rest
  for (const std::string& cpu : cpu_archs) {
    farm::v1::Requirements req;
    req.set_os("linux");
    req.set_cpu_arch(cpu);
    req.set_max_glibc(glibc_max.ToString());
    req.set_cuda_version(out.cuda.ToString());
    req.set_python_version(out.python);
    for (const Prerequisite& p : recipe.prerequisites) {
      if (!p.FromWheel()) req.add_libraries(p.host_library);
    }
    std::vector<std::string> hosts;
    for (const auto& w : online) {
      absl::Status s = CheckRequirements(req, w.capabilities());
      if (s.ok()) {
        hosts.push_back(w.name());
        continue;
      }
      farm::v1::Requirements platform = req;
      platform.clear_python_version();
      platform.clear_libraries();
      if (CheckRequirements(platform, w.capabilities()).ok()) {
        platform_ok.push_back(&w);
      } else {
        why.push_back(absl::StrCat(w.name(), ": ", s.message()));
      }
    }
    if (!hosts.empty()) {
      out.host_requirements = req;
      plan.set_cpu_arch(cpu);
      for (const auto& h : hosts) plan.add_build_hosts(h);
      break;
    }
  }
  if (plan.build_hosts().empty() && !platform_ok.empty()) {
    return MissingHostPrerequisites(recipe, out.python, out.cuda, platform_ok);
  }
  if (plan.build_hosts().empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no online worker can host the build of ", recipe.name, "-", out.version->version,
        " (linux ", absl::StrJoin(cpu_archs, " or "), ", glibc <= ", glibc_max.ToString(),
        ", CUDA ", out.cuda.ToString(), "): ", absl::StrJoin(why, "; "),
        ". Fix: start a worker that meets the recipe's platform, or, when the wheel may need a "
        "newer glibc than ",
        glibc_max.ToString(),
        " (its users' systems are newer), raise the "
        "ceiling for this build with --glibc-max"));
  }
  plan.set_python_version(out.python);
  for (const std::string& r : recipe.python_requirements) plan.add_python_requirements(r);
  FARM_ASSIGN_OR_RETURN(const EnvironmentContents contents,
                        EnvironmentContentsFor(recipe, out.cuda));
  plan.set_requirements_hash(EnvironmentContentsHash(contents));
  for (const Prerequisite& p : recipe.prerequisites) {
    farm::v1::PrerequisitePlan* pp = plan.add_prerequisites();
    pp->set_name(p.name);
    pp->set_version(p.version);
    if (p.FromWheel()) {
      FARM_ASSIGN_OR_RETURN(*pp->mutable_wheel(), PrerequisiteWheelFor(p, out.cuda));
    } else {
      pp->set_host_library(p.host_library);
      *pp->mutable_hosts() = plan.build_hosts();  // each build host has it: it was required
    }
    for (const auto& [name, value] : p.env) pp->add_variables(name);
  }

  for (const ArchRequest& r : out.archs.requests) {
    farm::v1::Requirements req;
    req.set_os("linux");
    req.set_cuda_version(out.cuda.ToString());
    req.add_sms(r.target.SmName());
    std::vector<std::string> shard_why;
    std::vector<std::string> workers = Qualifying(req, online, options.placement, &shard_why);
    if (workers.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no online worker can compile ", ShardName(r.target), " with CUDA ", out.cuda.ToString(),
          ": ", absl::StrJoin(shard_why, "; "), ". Fix: start a worker with that toolkit"));
    }
    farm::v1::ShardPlan* shard = plan.add_shards();
    shard->set_name(ShardName(r.target));
    for (const auto& w : workers) shard->add_workers(w);
  }
  if (auto mib = recipe.size.EstimateMib(out.archs.requests.size())) {
    plan.set_has_size_estimate(true);
    plan.set_estimated_wheel_mib(*mib);
  }
  *plan.mutable_publish() = RecipeToProto(recipe).publish();
  return out;
}

}  // namespace farm::coordinator
