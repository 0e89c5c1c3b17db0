// The dist-info WHEEL file ("Key: Value" lines).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

// The most a wheel's METADATA or WHEEL file may hold when read whole (to be parsed or
// rewritten); PyPI's own limit on a long description is far below this.
inline constexpr uint64_t kMaxWheelMetadataBytes = 16 << 20;

struct WheelMetadata {
  std::string wheel_version;  // "1.0"
  std::string generator;
  std::optional<bool> root_is_purelib;
  std::vector<std::string> tags;  // one per Tag: line
  std::string build;
};

absl::StatusOr<WheelMetadata> ParseWheelMetadata(absl::string_view text);

}  // namespace farm
