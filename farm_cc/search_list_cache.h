// The compiler's include search list for a call's flags, kept on this host. Reading a
// compile's includes without the compiler's scan (compile_inputs.h) needs the list, built-in
// directories included; the flags that steer it are a whole target's, so one query
// (`compiler -E -v` on an empty source) answers every unit of it.
//
// Keyed by the toolchain's digest, the compiler, the call's arguments less its source and
// outputs (with the source's suffix, which picks the language), the working directory and the
// compile's environment (CPATH and the like). Entries live beside the kept scans (scan_cache.h)
// and go with them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "farm/v1/cas.pb.h"
#include "farm_cc/compiler_locator.h"
#include "libfarm/cc/cc_command_line.h"

namespace farm {

// The kept list, or the compiler's answer now, then kept (pruning its directory to its share
// of `max_bytes`, as a kept scan does; a failure to keep it is logged, not returned).
// FAILED_PRECONDITION when the compiler gives none farm-cc can read.
absl::StatusOr<std::vector<std::string>> CachedIncludeSearchList(
    const std::string& cache_dir, uint64_t max_bytes, const farm::v1::Digest& toolchain_digest,
    const CcInvocation& call, const cc::CcCompilePlan& plan,
    const std::map<std::string, std::string>& action_env, const std::string& cwd);

}  // namespace farm
