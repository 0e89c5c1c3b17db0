// A remote compile's phases (farm.v1.CallPhases) as one list: named in the order a call passes
// through them, summed, checked, and told as text. The proto's field names are the phases'
// names, so farmctl, /metrics and the docs say the same words.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "farm/v1/actions.pb.h"
#include "libfarm/time/phase_timeline.h"

namespace farm {

// {"scan", 0.12}, {"hash", 0.01}, ..., {"other", 0.03}: every phase, in the call's order.
std::vector<std::pair<std::string, double>> PhaseList(const farm::v1::CallPhases& phases);

// `into` += `add`, phase by phase.
void AddPhases(farm::v1::CallPhases& into, const farm::v1::CallPhases& add);

// The phases summed.
double PhaseSum(const farm::v1::CallPhases& phases);

// Sets `other` to what the other phases leave of `wall_seconds`, never below 0 (the farm's
// phases are measured on other machines' clocks).
void SetOtherToTheRest(farm::v1::CallPhases& phases, double wall_seconds);

// INVALID_ARGUMENT naming the phase unless every one is finite and within [0, `max_seconds`].
absl::Status CheckPhases(const farm::v1::CallPhases& phases, double max_seconds);

// "run 1.80 s, scan 0.12 s, queue 0.05 s": the phases of at least `min_seconds`, longest
// first, at most `max_listed` of them; "" when none is.
std::string LongestPhases(const farm::v1::CallPhases& phases, double min_seconds,
                          size_t max_listed);

// A launcher's call as it goes: each span is named for the debug line (PhaseTimeline) and
// counted under one of CallPhases' phases; the farm's own phases (the coordinator's queue,
// the worker's three) are added from the action's result; `other` is what is left of the
// wall time.
class CallClock {
 public:
  // Ends the current span, naming it `what`, and counts it under `phase` (a CallPhases field
  // name: "scan", "upload", ...; "other" or "" for the rest).
  void Mark(std::string what, const std::string& phase);
  // The queue, fetch, run and output upload of the farm's run that answered the call.
  void AddFarmPhases(const farm::v1::CallPhases& farm);
  // A span measured elsewhere, for the debug line only.
  void Note(std::string what, absl::Duration d) { timeline_.Note(std::move(what), d); }

  double WallSeconds() const { return timeline_.Total(); }
  // The phases so far, `other` the wall time the others leave (never below 0).
  farm::v1::CallPhases Phases() const;
  std::string Summary() const { return timeline_.Summary(); }

 private:
  PhaseTimeline timeline_;
  farm::v1::CallPhases phases_;
};

// The buckets of every phase histogram in /metrics, in seconds: a remote compile's overhead
// is counted in milliseconds, its run in seconds to hours.
const std::vector<double>& PhaseHistogramBuckets();

}  // namespace farm
