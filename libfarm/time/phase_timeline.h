// Where one call's time went, phase by phase, for a debug log line: a farm-cc call's scan,
// input tree, upload, farm and download; a worker's layout, run and upload. A remote compile's
// cost over a local one is the sum of such phases, and cutting it starts with knowing which.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace farm {

class PhaseTimeline {
 public:
  PhaseTimeline() : last_(absl::Now()) {}

  // Ends the current phase, naming it; the next one starts now. Returns its seconds (what a
  // call's phases report: farm.v1.CallPhases).
  double Mark(std::string phase);
  // The phases so far, in seconds.
  double Total() const;
  // A span measured elsewhere (a worker's share of a farm phase), shown after the phases.
  void Note(std::string what, absl::Duration d) { notes_.emplace_back(std::move(what), d); }

  // "scan 0.15 s, toolchain 0.00 s, ... (total 5.31 s; queued 0.01 s, ...)".
  std::string Summary() const;

 private:
  absl::Time last_;
  std::vector<std::pair<std::string, absl::Duration>> phases_;
  std::vector<std::pair<std::string, absl::Duration>> notes_;
};

}  // namespace farm
