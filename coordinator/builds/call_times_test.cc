#include "coordinator/builds/call_times.h"

#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

using ::testing::HasSubstr;

farm::v1::ReportNvccCallRequest Timed(const std::string& unit, double wall, double run) {
  farm::v1::ReportNvccCallRequest r;
  r.set_build_id("b1");
  r.set_kind(farm::v1::COMPILE_CALL_KIND_HOST);
  r.set_outcome(farm::v1::NVCC_CALL_OUTCOME_SPLIT);
  r.set_unit(unit);
  r.set_wall_seconds(wall);
  r.mutable_phases()->set_run(run);
  r.mutable_phases()->set_other(wall - run);
  return r;
}

TEST(CallTimesTest, SumsEveryCallAndKeepsTheSlowestFirst) {
  farm::v1::CallTimes times;
  for (int i = 0; i < 25; ++i) {
    // 0.5, 1.5, ... in an order that is not sorted.
    const double wall = 0.5 + (i * 7) % 25;
    AddCallTimes(times, Timed("u" + std::to_string(i), wall, wall / 2));
  }
  EXPECT_EQ(times.calls(), 25u);
  EXPECT_DOUBLE_EQ(times.wall_seconds(), 25 * 0.5 + 24 * 25 / 2.0);
  EXPECT_DOUBLE_EQ(times.phases().run(), times.wall_seconds() / 2);
  ASSERT_EQ(times.slowest_size(), static_cast<int>(kSlowestCallsKept));
  for (int i = 0; i < times.slowest_size(); ++i) {
    EXPECT_DOUBLE_EQ(times.slowest(i).wall_seconds(), 24.5 - i) << i;
  }
  EXPECT_DOUBLE_EQ(times.slowest(0).phases().run(), 24.5 / 2);
  // 24.5 s is i = 7 (7 * 7 % 25 = 24).
  EXPECT_EQ(times.slowest(0).unit(), "u7");
  // A call no slower than the tenth slowest changes the sums only.
  const std::string tenth = times.slowest(9).unit();  // 15.5 s
  AddCallTimes(times, Timed("fast", 15.5, 1));
  EXPECT_EQ(times.slowest(9).unit(), tenth);
  EXPECT_EQ(times.slowest_size(), static_cast<int>(kSlowestCallsKept));
  EXPECT_EQ(times.calls(), 26u);
  // A slower one takes its place among them, and the tenth leaves.
  AddCallTimes(times, Timed("slow", 20.0, 1));
  EXPECT_EQ(times.slowest(5).unit(), "slow");
  EXPECT_NE(times.slowest(9).unit(), tenth);
}

TEST(CallTimesTest, RefusesTimesThatAreNotOrNotTheFarms) {
  EXPECT_TRUE(CheckCallTimes(Timed("src/a.cc", 1.5, 1)).ok());
  farm::v1::ReportNvccCallRequest fallback = Timed("a.cc", 1, 1);
  fallback.set_outcome(farm::v1::NVCC_CALL_OUTCOME_FALLBACK);
  EXPECT_THAT(CheckCallTimes(fallback).message(), HasSubstr("not for fallback"));
  EXPECT_EQ(CheckCallTimes(Timed(std::string(kMaxCallUnitBytes + 1, 'u'), 1, 1)).code(),
            absl::StatusCode::kInvalidArgument);
  for (double bad : {-1.0, kMaxCallSeconds * 2, std::numeric_limits<double>::quiet_NaN()}) {
    absl::Status wall = CheckCallTimes(Timed("a.cc", bad, 0));
    EXPECT_EQ(wall.code(), absl::StatusCode::kInvalidArgument) << bad;
    farm::v1::ReportNvccCallRequest phase = Timed("a.cc", 1, 0);
    phase.mutable_phases()->set_queue(bad);
    EXPECT_THAT(CheckCallTimes(phase).message(), HasSubstr("phase 'queue'")) << bad;
  }
  // A report without times (a launcher older than them) is counted as before.
  farm::v1::ReportNvccCallRequest plain;
  plain.set_outcome(farm::v1::NVCC_CALL_OUTCOME_FALLBACK);
  EXPECT_FALSE(HasCallTimes(plain));
  EXPECT_TRUE(CheckCallTimes(plain).ok());
}

TEST(CallTimesTest, MetricsHaveAHistogramPerKindAndPhase) {
  MetricsRegistry metrics;
  CallTimeMetrics times(&metrics);
  times.Observe(Timed("a.cc", 0.3, 0.2));
  const std::string text = metrics.Render();
  EXPECT_THAT(text, HasSubstr("farm_compile_call_seconds_count{kind=\"host\"} 1"));
  EXPECT_THAT(text, HasSubstr("farm_compile_call_phase_seconds_bucket{kind=\"host\",phase=\"run\","
                              "le=\"0.25\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("farm_compile_call_phase_seconds_bucket{kind=\"host\",phase=\"other\","
                        "le=\"0.05\"} 0"));
}

}  // namespace
}  // namespace farm::coordinator
