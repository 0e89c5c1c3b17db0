#include "libfarm/wheel/wheel_metadata.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace farm {

absl::StatusOr<WheelMetadata> ParseWheelMetadata(absl::string_view text) {
  WheelMetadata metadata;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripTrailingAsciiWhitespace(line);
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "WHEEL line ", line_number, ": expected \"Key: Value\", got \"", line, "\""));
    }
    const absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, colon));
    const std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    if (absl::EqualsIgnoreCase(key, "Wheel-Version")) {
      metadata.wheel_version = value;
    } else if (absl::EqualsIgnoreCase(key, "Generator")) {
      metadata.generator = value;
    } else if (absl::EqualsIgnoreCase(key, "Root-Is-Purelib")) {
      metadata.root_is_purelib = absl::EqualsIgnoreCase(value, "true");
    } else if (absl::EqualsIgnoreCase(key, "Tag")) {
      metadata.tags.push_back(value);
    } else if (absl::EqualsIgnoreCase(key, "Build")) {
      metadata.build = value;
    }
  }
  if (metadata.wheel_version.empty()) {
    return absl::InvalidArgumentError("WHEEL has no Wheel-Version line");
  }
  return metadata;
}

}  // namespace farm
