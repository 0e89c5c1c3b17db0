#include "libfarm/launcher/fallback_reason.h"

#include <string>

#include "absl/strings/cord.h"

namespace farm {
namespace {

constexpr char kPayloadUrl[] = "type.googleapis.com/farm.v1.FallbackReason";

}  // namespace

absl::Status WithFallbackReason(absl::Status status, farm::v1::FallbackReason code) {
  status.SetPayload(kPayloadUrl, absl::Cord(farm::v1::FallbackReason_Name(code)));
  return status;
}

farm::v1::FallbackReason FallbackReasonOf(const absl::Status& status,
                                          farm::v1::FallbackReason otherwise) {
  const auto payload = status.GetPayload(kPayloadUrl);
  farm::v1::FallbackReason code;
  if (payload && farm::v1::FallbackReason_Parse(std::string(*payload), &code)) return code;
  return otherwise;
}

}  // namespace farm
