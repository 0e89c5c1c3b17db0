#include "libfarm/launcher/launcher_config.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace farm {

absl::Status BadValue(const char* name, absl::string_view value, absl::string_view problem,
                      absl::string_view fix) {
  return absl::InvalidArgumentError(absl::StrCat(name, "='", value, "' ", problem, ". Fix: ", fix));
}

std::optional<bool> ParseStrictBool(absl::string_view value) {
  const std::string word = absl::AsciiStrToLower(value);
  for (const char* yes : {"1", "true", "yes", "on"}) {
    if (word == yes) return true;
  }
  for (const char* no : {"0", "false", "no", "off"}) {
    if (word == no) return false;
  }
  return std::nullopt;
}

}  // namespace farm
