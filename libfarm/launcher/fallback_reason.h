// The code a launcher's fallback is counted by (farm.v1.FallbackReason), carried by the status
// that says why the call cannot go to the farm: the launcher then reports what the status
// says it is, never what its text reads like.
#pragma once

#include "absl/status/status.h"
#include "farm/v1/builds.pb.h"

namespace farm {

// `status` carrying `code` (a payload; an OK status stays OK).
absl::Status WithFallbackReason(absl::Status status, farm::v1::FallbackReason code);

// The code `status` carries, or `otherwise` when it carries none.
farm::v1::FallbackReason FallbackReasonOf(const absl::Status& status,
                                          farm::v1::FallbackReason otherwise);

}  // namespace farm
