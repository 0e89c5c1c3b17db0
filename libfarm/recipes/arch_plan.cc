#include "libfarm/recipes/arch_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace farm {
namespace {

std::string Dotted(const ArchRequest& r) {
  return absl::StrCat(r.target.DottedName(), r.ptx ? "+PTX" : "");
}

absl::Status Refuse(const Recipe& recipe, const ArchRequest& request, absl::string_view why,
                    absl::string_view fix) {
  return absl::FailedPreconditionError(absl::StrCat(
      "recipe '", recipe.name, "' (", recipe.package, ") cannot serve ", Dotted(request), ": ", why,
      "; it builds ", BuildableDescription(recipe.archs),
      recipe.archs.min ? absl::StrCat(", for ", recipe.archs.min->SmName(), " and newer") : "",
      " (", recipe.file, ", [archs]). Fix: ", fix));
}

}  // namespace

std::string BuildableDescription(const ArchRules& rules) {
  if (rules.buildable.empty()) return "any arch the toolkit compiles";
  std::vector<std::string> names;
  for (const CudaTarget& t : rules.buildable) names.push_back(t.SmName());
  return absl::StrCat(absl::StrJoin(names, ", "), rules.ptx ? "" : ", SASS only (no PTX)");
}

absl::StatusOr<ArchPlan> PlanArchs(const Recipe& recipe, const ArchList& requested) {
  ArchPlan out;
  const ArchRules& rules = recipe.archs;
  if (rules.Empty()) {
    out.planned = requested;
    for (const ArchRequest& r : requested.requests) out.routes.push_back({r, r});
    return out;
  }
  for (const ArchRequest& r : requested.requests) {
    const int gpu = r.target.sm;
    if (rules.min && gpu < rules.min->sm) {
      return Refuse(
          recipe, r,
          absl::StrCat("it needs ", rules.min->SmName(), " or newer (", rules.min_reason, ")"),
          absl::StrCat("drop ", r.target.DottedName(), " from --archs; GPUs below ",
                       rules.min->DottedName(), " cannot run ", recipe.package));
    }
    if (r.ptx && !rules.ptx) {
      return Refuse(recipe, r, absl::StrCat(recipe.package, " emits no PTX"),
                    absl::StrCat("ask for ", r.target.DottedName(), " without +PTX"));
    }
    ArchRequest built = r;
    if (!rules.buildable.empty() && std::find(rules.buildable.begin(), rules.buildable.end(),
                                              r.target) == rules.buildable.end()) {
      if (auto sass = BestBuildableSass(gpu, rules.buildable)) {
        built = {*sass, r.ptx};
      } else {
        // No cubin runs there; the newest PTX at or below it JITs, if the package emits PTX.
        std::optional<CudaTarget> ptx;
        for (const CudaTarget& t : rules.buildable) {
          if (rules.ptx && PtxRunsOn(t, gpu) && (!ptx || ptx->sm < t.sm)) ptx = t;
        }
        if (!ptx) {
          return Refuse(recipe, r,
                        absl::StrCat("none of its archs runs on ", r.target.SmName(),
                                     " (SASS runs only on later SMs of its own major",
                                     rules.ptx ? "" : ", and it emits no PTX", ")"),
                        absl::StrCat("drop ", r.target.DottedName(),
                                     " from --archs, or add an arch that runs on it to "
                                     "archs.buildable once the package builds one"));
        }
        built = {*ptx, true};
      }
    }
    out.routes.push_back({r, built});
    auto same = std::find_if(out.planned.requests.begin(), out.planned.requests.end(),
                             [&](const ArchRequest& p) { return p.target == built.target; });
    if (same != out.planned.requests.end()) {
      same->ptx = same->ptx || built.ptx;
    } else {
      out.planned.requests.push_back(built);
    }
  }
  std::sort(out.planned.requests.begin(), out.planned.requests.end());
  if (rules.split_below) {
    std::vector<std::string> below, above;
    for (const ArchRequest& p : out.planned.requests) {
      (p.target.sm < rules.split_below->sm ? below : above).push_back(p.target.DottedName());
    }
    if (!below.empty() && !above.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("recipe '", recipe.name, "' (", recipe.package, ") cannot build ",
                       absl::StrJoin(below, ";"), " together with ", absl::StrJoin(above, ";"),
                       ": ", rules.split_reason, " (", recipe.file, ", [archs] split_below = \"",
                       rules.split_below->DottedName(), "\"). Fix: submit them apart, --archs \"",
                       absl::StrJoin(below, ";"), "\" and --archs \"", absl::StrJoin(above, ";"),
                       "\" (two builds)"));
    }
  }
  return out;
}

}  // namespace farm
