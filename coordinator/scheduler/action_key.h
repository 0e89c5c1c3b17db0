// The action-cache key: a digest of everything that decides an action's outputs.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "farm/v1/actions.pb.h"

namespace farm::coordinator {

// Action.history_key's limit: a translation unit and an arch.
inline constexpr size_t kMaxHistoryKeyBytes = 256;

// SHA-256 (hex) over argv, environment, inputs (path, digest, executable bit), output paths
// and the platform requirements (OS, CPU arch, glibc ceiling, CUDA toolkit version, exact
// release and SMs). Scheduling-only fields (build, shard, timeout, labels, RAM, history key)
// are left out, so the same compile from another build hits the cache.
std::string ActionKey(const farm::v1::Action& action);

// INVALID_ARGUMENT naming the problem: empty argv, paths that leave the scratch directory,
// duplicate or malformed inputs, bad digests, malformed requirements, absurd timeouts.
absl::Status ValidateAction(const farm::v1::Action& action);

}  // namespace farm::coordinator
