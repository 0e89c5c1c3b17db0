// farm-cc's decision for one call: on the farm when it can be the same compile there, else the
// local compiler, with the reason counted in the build (and, in strict mode, a failure).
#pragma once

#include "farm_cc/compiler_locator.h"
#include "farm_cc/farm_cc_config.h"

namespace farm {

// Runs the call and returns its exit code (kStrictExitCode when strict mode refuses it); the
// compiler's output reaches our stdout/stderr.
int RemoteOrLocal(const CcInvocation& call, const FarmCcConfig& options);

// Replaces this process with the compiler, as asked, outside the farm and its accounting (a
// call of farm-cc's own child, part of its ancestor's call). Returns only if exec fails
// (exit code 127).
int ExecCompiler(const CcInvocation& call);

}  // namespace farm
