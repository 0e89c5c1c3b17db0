#include "libfarm/time/phase_timeline.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace farm {
namespace {

std::string Seconds(absl::Duration d) {
  return absl::StrFormat("%.3f s", absl::ToDoubleSeconds(d));
}

}  // namespace

double PhaseTimeline::Mark(std::string phase) {
  const absl::Time now = absl::Now();
  const absl::Duration took = now - last_;
  phases_.emplace_back(std::move(phase), took);
  last_ = now;
  return absl::ToDoubleSeconds(took);
}

double PhaseTimeline::Total() const {
  absl::Duration total;
  for (const auto& [phase, d] : phases_) total += d;
  return absl::ToDoubleSeconds(total);
}

std::string PhaseTimeline::Summary() const {
  std::string out;
  absl::Duration total;
  for (const auto& [phase, d] : phases_) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", phase, " ", Seconds(d));
    total += d;
  }
  absl::StrAppend(&out, " (total ", Seconds(total));
  for (const auto& [what, d] : notes_) absl::StrAppend(&out, "; ", what, " ", Seconds(d));
  absl::StrAppend(&out, ")");
  return out;
}

}  // namespace farm
