#include "libfarm/actions/call_phases.h"

#include <limits>

#include "absl/time/clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

farm::v1::CallPhases Phases(double scan, double run, double other) {
  farm::v1::CallPhases p;
  p.set_scan(scan);
  p.set_run(run);
  p.set_other(other);
  return p;
}

TEST(CallPhasesTest, EveryPhaseIsListedInTheCallsOrder) {
  std::vector<std::string> names;
  for (const auto& [name, seconds] : PhaseList(Phases(1, 2, 3))) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("scan", "hash", "upload", "queue", "fetch", "run", "output_upload",
                                 "download", "other"));
}

TEST(CallPhasesTest, AddsAndSumsPhaseByPhase) {
  farm::v1::CallPhases sum;
  AddPhases(sum, Phases(0.5, 2, 0.25));
  AddPhases(sum, Phases(0.5, 1, 0));
  EXPECT_DOUBLE_EQ(sum.scan(), 1.0);
  EXPECT_DOUBLE_EQ(sum.run(), 3.0);
  EXPECT_DOUBLE_EQ(sum.other(), 0.25);
  EXPECT_DOUBLE_EQ(PhaseSum(sum), 4.25);
  // `other` is what the rest leave of the wall time, never below 0.
  SetOtherToTheRest(sum, 5.0);
  EXPECT_DOUBLE_EQ(sum.other(), 1.0);
  SetOtherToTheRest(sum, 3.0);
  EXPECT_EQ(sum.other(), 0);
}

TEST(CallPhasesTest, RefusesTimesThatAreNotTimesNamingThePhase) {
  EXPECT_TRUE(CheckPhases(Phases(0, 86400, 1), 86400).ok());
  for (double bad : {-0.001, 86400.5, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    absl::Status s = CheckPhases(Phases(0, bad, 0), 86400);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("phase 'run'")) << s;
  }
}

TEST(CallPhasesTest, TellsTheLongestPhasesFirst) {
  EXPECT_EQ(LongestPhases(Phases(0.12, 1.8, 0.004), 0.01, 3), "run 1.80 s, scan 0.12 s");
  EXPECT_EQ(LongestPhases(Phases(0.12, 1.8, 0.5), 0.01, 2), "run 1.80 s, other 0.50 s");
  EXPECT_EQ(LongestPhases(farm::v1::CallPhases(), 0.01, 3), "");
}

TEST(CallClockTest, CountsSpansUnderTheirPhasesAndLeavesTheRestToOther) {
  CallClock clock;
  absl::SleepFor(absl::Milliseconds(20));
  clock.Mark("scan", "scan");
  absl::SleepFor(absl::Milliseconds(10));
  clock.Mark("connect", "other");
  absl::SleepFor(absl::Milliseconds(30));
  clock.Mark("farm", "");
  farm::v1::CallPhases farm;
  farm.set_queue(0.005);
  farm.set_run(0.02);
  clock.AddFarmPhases(farm);
  const farm::v1::CallPhases p = clock.Phases();
  EXPECT_GE(p.scan(), 0.02);
  EXPECT_DOUBLE_EQ(p.queue(), 0.005);
  EXPECT_DOUBLE_EQ(p.run(), 0.02);
  EXPECT_EQ(p.upload(), 0);
  // The phases add up to the wall time: connect's 10 ms and the farm's unaccounted 5 ms are
  // other's.
  EXPECT_NEAR(PhaseSum(p), clock.WallSeconds(), 1e-9);
  EXPECT_GE(p.other(), 0.015);
  // The farm's phases beyond the wall time (clocks of other machines) leave other at 0.
  farm.set_run(1000);
  clock.AddFarmPhases(farm);
  EXPECT_EQ(clock.Phases().other(), 0);
}

}  // namespace
}  // namespace farm
