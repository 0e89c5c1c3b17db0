// Process exit codes shared by every Wheelfarm binary.
#pragma once

#include "absl/status/status.h"

namespace farm {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // may succeed if retried (port busy, peer away)
inline constexpr int kExitConfig = 2;   // the operator must change something first
inline constexpr int kExitUnauthenticated = 3;

int ExitCodeForStatus(const absl::Status& status);

}  // namespace farm
