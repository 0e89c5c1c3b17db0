// What a build says its units cost before the farm has run any of them (issue 45). A first
// build has no history, so the farm would order its units as if all cost the same and start
// the longest last. FARM_NVCC_COST_HINTS="GLOB=SECONDS;GLOB=SECONDS" (a recipe sets it in
// [build.env]) names them: the first glob that matches a unit's source name (its last path
// components, "cuda/flash_attn/flash_bwd_hdim256_fp16_sm80.cu"; '*' crosses '/') gives the
// seconds of its device compile per arch. Used only where the farm has learnt nothing.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

inline constexpr size_t kMaxCostHints = 256;
inline constexpr size_t kMaxCostHintGlobBytes = 256;
inline constexpr double kMaxCostHintSeconds = 86400;

class CostHints {
 public:
  // INVALID_ARGUMENT naming the entry for one that is not GLOB=SECONDS (seconds from 0 to a
  // day), an empty or oversized glob, or more than kMaxCostHints entries. Empty text: none.
  static absl::StatusOr<CostHints> Parse(absl::string_view text);

  // The seconds of the first glob that matches `source_name`; nullopt when none does.
  std::optional<double> SecondsFor(const std::string& source_name) const;
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<std::pair<std::string, double>> rules_;  // glob, seconds; in the order given
};

}  // namespace farm
