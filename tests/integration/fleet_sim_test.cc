// The fleet simulator at small scale: reduce_cub.cu as measured here, 66 TUs for 3 archs
// (198 device actions), through a real coordinator and 4 simulated hosts over real gRPC.
// It must finish with every action completed, never beat its lower bound, and print each
// figure the benchmark promises.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench/fleet_sim_run.h"
#include "tests/support/farm_processes.h"

namespace farm::testing {
namespace {

using ::testing::HasSubstr;

TEST(FleetSimTest, SmallBuildCompletesAboveItsLowerBound) {
  TempDir dir("fleet-sim");
  bench::FleetSimOptions options;
  options.profile_path = std::string(FARM_SOURCE_DIR) + "/bench/profiles/reduce_cub-measured.json";
  options.hosts = 4;
  options.repeat = 66;
  options.ms_per_second = 10;
  options.work_dir = (dir.path() / "sim").string();
  auto report = bench::RunFleetSim(options);
  ASSERT_TRUE(report.ok()) << report.status();

  EXPECT_EQ(report->actions_expected, 198);
  EXPECT_EQ(report->actions_completed, 198) << report->first_error;
  EXPECT_EQ(report->failed_tus, 0) << report->first_error;
  EXPECT_EQ(report->worker_errors, 0) << report->first_error;
  EXPECT_TRUE(report->Complete());
  EXPECT_GT(report->bounds.Bound(), 0);
  EXPECT_GE(report->makespan_s, report->bounds.Bound());
  EXPECT_GE(report->Ratio(), 1.0);
  EXPECT_EQ(report->arch_finish_s.size(), 3u);
  for (const auto& [arch, s] : report->arch_finish_s) {
    EXPECT_GT(s, 0) << arch;
    EXPECT_LE(s, report->makespan_s) << arch;
  }
  EXPECT_EQ(report->utilization.size(), 10u);
  EXPECT_GT(report->coordinator_cpu_s, 0);
  EXPECT_GT(report->coordinator_peak_rss_mib, 0);
  // Memory-aware placement: no worker ran more than its RAM holds.
  EXPECT_EQ(report->workers_over_ram, 0);

  const std::string table = bench::FormatReport(*report);
  for (const char* figure :
       {"198 of 198 completed", "makespan", "lower bound", "binding: build host", "device work",
        "build host work", "critical path", "makespan / bound", "fleet utilization",
        "queue wait         p50", "arch finished at   sm_121", "sm_75", "sm_90", "coordinator",
        "s CPU, peak RSS", "--queue-order longest-first, --memory-aware true, costs learnt"}) {
    EXPECT_THAT(table, HasSubstr(figure));
  }
  const nlohmann::json json = bench::ReportJson(*report);
  for (const char* key : {"makespan_s", "lower_bound", "ratio", "utilization_per_tenth",
                          "queue_wait_s", "arch_finish_s", "coordinator"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
}

}  // namespace
}  // namespace farm::testing
