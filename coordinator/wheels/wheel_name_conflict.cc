#include "coordinator/wheels/wheel_name_conflict.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/cuda/arch_set_label.h"

namespace farm {
namespace {

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

// The plan's wheel version, as retagging will write it ("0.1.0+cu130.sm75.sm90"); "" for an
// unreadable plan.
std::string LabelledVersion(const farm::v1::BuildPlan& plan) {
  auto cuda = ParseToolkitVersion(plan.cuda_version());
  auto archs = ParseArchList(plan.archs());
  if (!cuda.ok() || !archs.ok()) return "";
  return WithFarmLocalLabel(plan.version(), *cuda, *archs);
}

// What makes two builds of one wheel name build other bytes; "" when nothing the plan shows.
std::string WhatDiffers(const farm::v1::BuildPlan& a, const farm::v1::BuildPlan& b) {
  std::vector<std::string> differs;
  // A tree read from two directories is one source when its content is.
  const bool both_read = !a.source_digest().empty() && !b.source_digest().empty();
  if (both_read ? a.source_digest() != b.source_digest() : a.source() != b.source()) {
    differs.push_back(absl::StrCat("source \"", a.source(), "\", not \"", b.source(), "\""));
  }
  if (a.requirements_hash() != b.requirements_hash()) {
    differs.push_back(
        absl::StrCat("build environment ", a.requirements_hash(), ", not ", b.requirements_hash()));
  }
  return absl::StrJoin(differs, "; ");
}

}  // namespace

absl::Status CheckWheelNameIsFree(const farm::v1::BuildPlan& plan,
                                  const std::vector<farm::v1::Build>& builds) {
  const std::string version = LabelledVersion(plan);
  if (version.empty()) return absl::OkStatus();  // the planner refuses such a plan first
  for (const farm::v1::Build& b : builds) {
    if (b.kind() != farm::v1::BUILD_KIND_WHEEL || b.package() != plan.package() ||
        b.state() == farm::v1::BUILD_STATE_FAILED || b.state() == farm::v1::BUILD_STATE_CANCELLED ||
        LabelledVersion(b.plan()) != version || b.plan().cpu_arch() != plan.cpu_arch() ||
        // The Python tag may follow the interpreter (cp311 and cp312 are two names).
        b.plan().python_version() != plan.python_version()) {
      continue;
    }
    const std::string differs = WhatDiffers(plan, b.plan());
    if (differs.empty()) continue;  // the same build again
    const std::string where = SharedDestination(plan, b.plan());
    if (where.empty()) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        plan.package(), " ", version, " for ", plan.cpu_arch(), " is already build ", b.id(), " (",
        farm::v1::BuildState_Name(b.state()), "); this one, with ", differs,
        ", would carry the same file name to the same place (", where,
        "), where a published name means one file: it would be refused there after every "
        "compile. "
        "Fix: give this build a version of its own (a new recipe version, e.g. a post-release "
        "such as ",
        plan.version(),
        ".post1), or publish it somewhere else. Another arch set needs neither: its wheel "
        "is labelled with its SMs and lands beside the others"));
  }
  return absl::OkStatus();
}

}  // namespace farm
