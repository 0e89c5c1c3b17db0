// One wheel name, one arch set. A wheel's file name (package, version, +cuXY, Python and
// platform tags) does not say which SMs it holds, so a second arch set of a version the farm
// has built would collide with the first only at publish time, after every compile. The farm
// refuses it at submit instead, naming the build that holds the name.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "farm/v1/builds.pb.h"

namespace farm {

// OK unless a wheel build of the same package, version, CUDA major.minor (the +cuXY label)
// and CPU arch, not failed or cancelled, publishing to a place this plan publishes to, has
// another arch set: then kFailedPrecondition.
absl::Status CheckArchSetIsNew(const farm::v1::BuildPlan& plan,
                               const std::vector<farm::v1::Build>& builds);

}  // namespace farm
