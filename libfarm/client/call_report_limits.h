// What one compile call's report (farm.v1.ReportNvccCallRequest) may carry: a launcher cuts
// its text to these, and the coordinator refuses more. Header-only, for both sides.
#pragma once

#include <cstddef>

namespace farm {

inline constexpr size_t kMaxCallReasonBytes = 1024;  // a fallback's reason
inline constexpr size_t kMaxCallUnitBytes = 256;     // the unit a timed call names

}  // namespace farm
