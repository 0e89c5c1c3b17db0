// Many launchers on one coordinator, bounded for CI (issue 45 item 3): 600 launchers' calls
// (Execute, then Wait polls, each from its own channel) from three big builds, and a small
// build behind them, against a coordinator whose --grpc-max-calls (64) is far below the
// launchers: every compile completes, none sees a refusal or a timeout (the coordinator
// answers "busy" and the launchers wait: back-pressure), and the small build finishes long
// before the big ones (builds are served round-robin).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench/launcher_load.h"
#include "tests/support/farm_processes.h"

namespace farm::testing {
namespace {

// Three big builds of `big` launchers each and a small one of 8, 100 ms compiles on 2 workers
// of 8 slots, against a coordinator serving 64 calls.
bench::LauncherLoadOptions Options(const TempDir& dir, int big) {
  bench::LauncherLoadOptions options;
  options.work_dir = (dir.path() / "load").string();
  options.big_builds = {big, big, big};
  options.small_build = 8;
  options.action_time = absl::Milliseconds(100);
  options.workers = 2;
  options.slots = 8;
  options.grpc_max_calls = 64;
  return options;
}

TEST(LauncherLoadTest, SixHundredLaunchersOnSixtyFourCallsAllCompleteAndTheSmallBuildIsServed) {
  TempDir dir("launcher-load");
  const bench::LauncherLoadOptions options = Options(dir, 200);
  auto report = bench::RunLauncherLoad(options);
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string table = report->Table();
  EXPECT_EQ(report->launchers, 608) << table;
  EXPECT_EQ(report->completed, 608) << table;
  for (const bench::BuildFigures& b : report->builds) {
    EXPECT_TRUE(b.failed.empty()) << b.build_id << "\n" << table;
  }
  EXPECT_EQ(report->worker_errors, 0) << table;
  // More launchers in a call at once than the coordinator serves calls: it held them back.
  EXPECT_GT(report->peak_concurrent, 64) << table;
  // The small build, started behind 600 queued compiles, is not served after them.
  ASSERT_EQ(report->builds.size(), 4u);
  const double small = report->builds.back().wall_s;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_LT(small, report->builds[i].wall_s / 2) << table;
  }
  EXPECT_GT(report->coordinator_peak_rss_mib, 0) << table;
}

// Bad input under load: a build's launchers killed in their calls with their actions queued
// (a ^C to ninja) and a worker lost with its leases out, while hundreds of calls wait. Every
// other compile completes on the worker that is left, and the coordinator is left holding
// nothing: the killed build's actions ran out, none is running or queued.
TEST(LauncherLoadTest, AKilledBuildAndALostWorkerLeaveNothingBehind) {
  TempDir dir("launcher-load-bad");
  bench::LauncherLoadOptions options = Options(dir, 150);
  options.abandon_build = "big-1";
  options.lose_worker = true;
  auto report = bench::RunLauncherLoad(options);
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string table = report->Table();
  ASSERT_EQ(report->builds.size(), 4u);
  const bench::BuildFigures& killed = report->builds[0];
  int abandoned = 0;
  for (const auto& [why, n] : killed.failed) {
    EXPECT_EQ(why, "abandoned") << table;
    abandoned += n;
  }
  EXPECT_EQ(killed.completed + abandoned, 150) << table;
  EXPECT_GT(abandoned, 0) << table;
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_TRUE(report->builds[i].failed.empty()) << report->builds[i].build_id << "\n" << table;
    EXPECT_EQ(report->builds[i].completed, report->builds[i].launchers) << table;
  }
  EXPECT_EQ(report->left_running, 0) << table;
  EXPECT_EQ(report->left_queued, 0) << table;
  EXPECT_EQ(report->worker_errors, 0) << table;
}

}  // namespace
}  // namespace farm::testing
