#include "libfarm/nvcc/cost_hints.h"

#include <fnmatch.h>

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace farm {

absl::StatusOr<CostHints> CostHints::Parse(absl::string_view text) {
  CostHints hints;
  for (absl::string_view entry : absl::StrSplit(text, ';', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    const size_t eq = entry.rfind('=');
    const absl::string_view glob =
        eq == absl::string_view::npos ? entry : absl::StripAsciiWhitespace(entry.substr(0, eq));
    double seconds = 0;
    if (eq == absl::string_view::npos || glob.empty() || glob.size() > kMaxCostHintGlobBytes ||
        !absl::SimpleAtod(absl::StripAsciiWhitespace(entry.substr(eq + 1)), &seconds) ||
        !std::isfinite(seconds) || seconds < 0 || seconds > kMaxCostHintSeconds) {
      return absl::InvalidArgumentError(absl::StrCat("cost hint '", entry.substr(0, 300),
                                                     "' is not GLOB=SECONDS. Fix: give each unit "
                                                     "pattern (at most ",
                                                     kMaxCostHintGlobBytes,
                                                     " bytes) its seconds of device compile "
                                                     "per arch, from 0 to ",
                                                     kMaxCostHintSeconds, ", separated by ';'"));
    }
    if (hints.rules_.size() == kMaxCostHints) {
      return absl::InvalidArgumentError(absl::StrCat(
          "more than ", kMaxCostHints, " cost hints. Fix: merge patterns that cost the same"));
    }
    hints.rules_.emplace_back(std::string(glob), seconds);
  }
  return hints;
}

std::optional<double> CostHints::SecondsFor(const std::string& source_name) const {
  for (const auto& [glob, seconds] : rules_) {
    if (fnmatch(glob.c_str(), source_name.c_str(), 0) == 0) return seconds;
  }
  return std::nullopt;
}

}  // namespace farm
