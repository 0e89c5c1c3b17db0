#include "libfarm/time/phase_timeline.h"

#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(PhaseTimelineTest, NamesEachPhaseInOrderWithTheTotalAndTheNotes) {
  PhaseTimeline timeline;
  absl::SleepFor(absl::Milliseconds(20));
  timeline.Mark("scan");
  timeline.Mark("upload");
  timeline.Note("queued", absl::Milliseconds(1500));
  const std::string summary = timeline.Summary();
  EXPECT_TRUE(std::regex_match(
      summary,
      std::regex(R"(scan 0\.0[2-9]\d s, upload 0\.\d{3} s \(total 0\.\d{3} s; queued 1\.500 s\))")))
      << summary;
}

TEST(PhaseTimelineTest, EmptyTimelineSaysOnlyTheTotal) {
  EXPECT_EQ(PhaseTimeline().Summary(), " (total 0.000 s)");
}

}  // namespace
}  // namespace farm
