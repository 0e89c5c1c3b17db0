#include "coordinator/builds/call_times.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "coordinator/builds/nvcc_call_counts.h"
#include "libfarm/actions/call_phases.h"

namespace farm::coordinator {
namespace {

std::string KindLabel(farm::v1::CompileCallKind kind) {
  return kind == farm::v1::COMPILE_CALL_KIND_HOST ? "host" : "nvcc";
}

}  // namespace

bool HasCallTimes(const farm::v1::ReportNvccCallRequest& report) {
  return !report.unit().empty() || report.wall_seconds() != 0 || report.has_phases();
}

absl::Status CheckCallTimes(const farm::v1::ReportNvccCallRequest& report) {
  if (!HasCallTimes(report)) return absl::OkStatus();
  if (report.outcome() != farm::v1::NVCC_CALL_OUTCOME_SPLIT &&
      report.outcome() != farm::v1::NVCC_CALL_OUTCOME_CACHED) {
    return absl::InvalidArgumentError(absl::StrCat("times are for calls the farm ran, not for ",
                                                   NvccOutcomeName(report.outcome()),
                                                   ". Fix: leave them empty"));
  }
  if (report.unit().size() > kMaxCallUnitBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the unit name of ", report.unit().size(),
                                                   " bytes is too long. Fix: send at most ",
                                                   kMaxCallUnitBytes, " bytes"));
  }
  const double wall = report.wall_seconds();
  if (!std::isfinite(wall) || wall < 0 || wall > kMaxCallSeconds) {
    return absl::InvalidArgumentError(absl::StrCat("a wall time of ", wall,
                                                   " s is not a time from 0 to ", kMaxCallSeconds,
                                                   " s. Fix: send the seconds the call took"));
  }
  return CheckPhases(report.phases(), kMaxCallSeconds);
}

void AddCallTimes(farm::v1::CallTimes& times, const farm::v1::ReportNvccCallRequest& report) {
  times.set_calls(times.calls() + 1);
  times.set_wall_seconds(times.wall_seconds() + report.wall_seconds());
  AddPhases(*times.mutable_phases(), report.phases());
  auto* slowest = times.mutable_slowest();
  if (slowest->size() >= static_cast<int>(kSlowestCallsKept) &&
      slowest->rbegin()->wall_seconds() >= report.wall_seconds()) {
    return;
  }
  farm::v1::UnitTime unit;
  unit.set_unit(report.unit());
  unit.set_wall_seconds(report.wall_seconds());
  *unit.mutable_phases() = report.phases();
  // Slowest first; a later call of equal time goes after the earlier ones.
  const auto at = std::upper_bound(slowest->begin(), slowest->end(), unit,
                                   [](const farm::v1::UnitTime& a, const farm::v1::UnitTime& b) {
                                     return a.wall_seconds() > b.wall_seconds();
                                   }) -
                  slowest->begin();
  slowest->Add(std::move(unit));
  for (int i = slowest->size() - 1; i > at; --i) slowest->SwapElements(i, i - 1);
  while (slowest->size() > static_cast<int>(kSlowestCallsKept)) slowest->RemoveLast();
}

void CallTimeMetrics::Observe(const farm::v1::ReportNvccCallRequest& report) {
  if (metrics_ == nullptr || !HasCallTimes(report)) return;
  const std::string kind = KindLabel(report.kind());
  metrics_
      ->GetHistogram("farm_compile_call_seconds",
                     "Wall time of a compile call the farm ran, as its launcher measured it.",
                     PhaseHistogramBuckets(), {{"kind", kind}})
      ->Observe(report.wall_seconds());
  for (const auto& [phase, seconds] : PhaseList(report.phases())) {
    metrics_
        ->GetHistogram("farm_compile_call_phase_seconds",
                       "Where a compile call the farm ran spent its time, phase by phase.",
                       PhaseHistogramBuckets(), {{"kind", kind}, {"phase", phase}})
        ->Observe(seconds);
  }
}

}  // namespace farm::coordinator
