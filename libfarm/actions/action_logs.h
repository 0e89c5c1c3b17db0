// An action's stdout and stderr as its launcher replays them: whole, not just the inline tail.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "farm/v1/actions.pb.h"
#include "libfarm/cas/cas_client.h"

namespace farm {

// The full text of one of a result's logs: the inline tail when it is all of it, else the blob
// (at most 16 MiB).
absl::StatusOr<std::string> ActionLogText(CasClient* cas, const farm::v1::Digest& digest,
                                          const std::string& tail);

}  // namespace farm
