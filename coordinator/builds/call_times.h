// Where the farm's compile calls spent their time (issue 45): each launcher's report of a call
// the farm ran (its unit, wall time and phases: libfarm/actions/call_phases.h) summed per build
// and kind into CallTimes, the slowest units kept, and the same in /metrics as histograms.
// Reports are hostile input: sizes and times are checked before anything is counted.
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/client/call_report_limits.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator {

inline constexpr size_t kSlowestCallsKept = 10;
inline constexpr double kMaxCallSeconds = 86400;  // a day: a compile's time, not a typo's

// Whether `report` carries times (a unit, a wall time or a phase).
bool HasCallTimes(const farm::v1::ReportNvccCallRequest& report);

// INVALID_ARGUMENT for times on a call the farm did not run (a fallback, a compile error), a
// unit over kMaxCallUnitBytes, or a wall time or phase that is not a time from 0 to
// kMaxCallSeconds.
absl::Status CheckCallTimes(const farm::v1::ReportNvccCallRequest& report);

// Adds a checked report's times to `times`: one call more, its wall time and phases summed,
// and among the kSlowestCallsKept slowest when it is one of them.
void AddCallTimes(farm::v1::CallTimes& times, const farm::v1::ReportNvccCallRequest& report);

// farm_compile_call_seconds{kind} (a call's wall time) and
// farm_compile_call_phase_seconds{kind, phase}, per reported call with times.
class CallTimeMetrics {
 public:
  explicit CallTimeMetrics(MetricsRegistry* metrics) : metrics_(metrics) {}
  void Observe(const farm::v1::ReportNvccCallRequest& report);

 private:
  MetricsRegistry* const metrics_;
};

}  // namespace farm::coordinator
