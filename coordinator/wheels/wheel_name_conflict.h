// One wheel file name, one wheel. A farm wheel's name carries its package, version, toolkit
// and arch set ("demo_cuda_ext-0.1.0+cu130.sm75.sm90-py3-none-manylinux_2_17_x86_64.whl",
// libfarm/cuda/arch_set_label.h), so another arch set of a published version is another file,
// published beside it. What still collides is the same name with other bytes: a second build
// of the same package, version, toolkit, arch set, CPU and Python from another source or
// another build environment, publishing where the first did. Every place keeps the first
// file of a name (the built-in index and PyPI-like repositories refuse the second), so that
// build would fail at publish time, after every compile; the farm refuses it at submit
// instead, naming the build that holds the name.
//
// The same build again (same source, same environment) is no collision: it is a rebuild,
// mostly from the action cache, and publishing compares bytes (the same bytes again is
// success).
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "farm/v1/builds.pb.h"

namespace farm {

// OK unless a wheel build, not failed or cancelled, would carry the file name this plan's
// wheel gets (same package and version, same +cuXY.smAB... label, same CPU arch and Python)
// to a place this plan publishes to, from another source or requirements hash: then
// kFailedPrecondition naming that build, what differs, and the fix.
absl::Status CheckWheelNameIsFree(const farm::v1::BuildPlan& plan,
                                  const std::vector<farm::v1::Build>& builds);

}  // namespace farm
