#include "coordinator/wheels/arch_set_conflict.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/cuda/arch_list.h"

namespace farm {
namespace {

std::set<std::string> PlannedShards(const farm::v1::BuildPlan& plan) {
  std::set<std::string> shards;
  for (const auto& shard : plan.shards()) shards.insert(shard.name());
  return shards;
}

// Where a wheel lands: the built-in index, a repository's URL, a hook's command. Two wheels of
// one name collide only where they land together.
std::string Destination(const farm::v1::RecipePublishTarget& target) {
  return absl::StrCat(target.kind(), " ", target.url(), " ", target.command().SerializeAsString());
}

// A destination both plans publish to, or "" when they share none.
std::string SharedDestination(const farm::v1::BuildPlan& a, const farm::v1::BuildPlan& b) {
  for (const auto& ta : a.publish()) {
    for (const auto& tb : b.publish()) {
      if (Destination(ta) == Destination(tb)) return ta.url().empty() ? ta.kind() : ta.url();
    }
  }
  return "";
}

// The +cuXY label the wheel gets: equal major.minor, equal name.
bool SameLocalLabel(const std::string& a, const std::string& b) {
  auto va = ParseToolkitVersion(a);
  auto vb = ParseToolkitVersion(b);
  return va.ok() && vb.ok() && *va == *vb;
}

}  // namespace

absl::Status CheckArchSetIsNew(const farm::v1::BuildPlan& plan,
                               const std::vector<farm::v1::Build>& builds) {
  const std::set<std::string> wanted = PlannedShards(plan);
  for (const farm::v1::Build& b : builds) {
    if (b.kind() != farm::v1::BUILD_KIND_WHEEL || b.package() != plan.package() ||
        b.version() != plan.version() || b.state() == farm::v1::BUILD_STATE_FAILED ||
        b.state() == farm::v1::BUILD_STATE_CANCELLED ||
        !SameLocalLabel(b.plan().cuda_version(), plan.cuda_version()) ||
        b.plan().cpu_arch() != plan.cpu_arch()) {
      continue;
    }
    const std::set<std::string> held(b.archs().begin(), b.archs().end());
    if (held == wanted) continue;
    const std::string where = SharedDestination(plan, b.plan());
    if (where.empty()) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        plan.package(), " ", plan.version(), " for CUDA ", plan.cuda_version(), " on ",
        plan.cpu_arch(), " is already build ", b.id(), " (", absl::StrJoin(held, ", "), ", ",
        farm::v1::BuildState_Name(b.state()), "); a wheel of ", absl::StrJoin(wanted, ", "),
        " would carry the same file name to the same place (", where,
        ") and be refused or replace it, after every compile. Fix: "
        "submit the same archs, or give this arch set a version of its own (a new recipe "
        "version, e.g. a post-release such as ",
        plan.version(), ".post1)"));
  }
  return absl::OkStatus();
}

}  // namespace farm
