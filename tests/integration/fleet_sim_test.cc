// The fleet simulator at small scale: reduce_cub.cu as measured here, 66 TUs for 3 archs
// (198 device actions), through a real coordinator and 4 simulated hosts over real gRPC.
// It must finish with every action completed, never beat its lower bound, and print each
// figure the benchmark promises.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "bench/fleet_profile.h"
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
  for (const char* figure : {"198 of 198 completed",
                             "makespan",
                             "lower bound",
                             "binding: build host",
                             "device work",
                             "build host work",
                             "+ link",
                             "critical path",
                             "cores busy",
                             "last ninja edge started",
                             "makespan / bound",
                             "fleet utilization",
                             "queue wait         p50",
                             "arch finished at   sm_121",
                             "sm_75",
                             "sm_90",
                             "coordinator",
                             "s CPU, peak RSS",
                             "local slots priority",
                             "--queue-order longest-first, --memory-aware true, costs learnt"}) {
    EXPECT_THAT(table, HasSubstr(figure));
  }
  const nlohmann::json json = bench::ReportJson(*report);
  for (const char* key : {"makespan_s", "lower_bound", "ratio", "utilization_per_tenth",
                          "queue_wait_s", "arch_finish_s", "coordinator"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
}

TEST(FleetSimTest, LongestFirstNinjaOrderStartsTheHeaviestCudaTusAndKeepsEveryTu) {
  auto profile =
      bench::LoadProfile(std::string(FARM_SOURCE_DIR) + "/bench/profiles/pytorch-2.9.1.json");
  ASSERT_TRUE(profile.ok()) << profile.status();
  const auto shuffled = bench::BuildOrder(*profile, 1, bench::NinjaOrder::kShuffled);
  const auto longest = bench::BuildOrder(*profile, 1, bench::NinjaOrder::kLongestFirst);
  ASSERT_EQ(shuffled.size(), longest.size());
  std::set<int> a, b;
  for (const auto& j : shuffled) a.insert(j.tu);
  for (const auto& j : longest) b.insert(j.tu);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), shuffled.size());
  // The profile's heaviest class (flash-attention backward, hdim 192/256) comes first, then
  // never a CUDA TU with a longer critical path after a shorter one.
  ASSERT_TRUE(longest.front().cuda);
  EXPECT_EQ(profile->cuda_tus[longest.front().klass].name, "flash_attn_bwd_hdim192_256");
  auto path = [&](const bench::BuildJob& j) {
    return j.cuda ? bench::CudaTuCriticalPath(profile->cuda_tus[j.klass], profile->archs) : 0.0;
  };
  for (size_t i = 1; i < longest.size(); ++i) {
    EXPECT_GE(path(longest[i - 1]), path(longest[i])) << i;
  }
  EXPECT_FALSE(bench::ParseNinjaOrder("sorted").ok());
}

TEST(FleetSimTest, TheBuildHostBoundCountsTheLinkWhole) {
  auto profile =
      bench::LoadProfile(std::string(FARM_SOURCE_DIR) + "/bench/profiles/pytorch-2.9.1.json");
  ASSERT_TRUE(profile.ok()) << profile.status();
  const bench::LowerBounds b = bench::ComputeLowerBounds(*profile, 960, 64);
  const double cores = profile->build_host.cores;
  EXPECT_DOUBLE_EQ(b.host_s, (b.host_work_s - profile->link_s) / cores + profile->link_s);
  EXPECT_GT(b.host_s, b.host_work_s / cores);
}

// With farm-cc, each CUDA TU's host compile is one more action on the farm and the build host
// keeps only the scan; PyTorch's bound then moves off the build host.
TEST(FleetSimTest, HostCompilesOnTheFarmAreActionsAndLeaveTheScanHere) {
  TempDir dir("fleet-sim-host");
  bench::FleetSimOptions options;
  options.profile_path = std::string(FARM_SOURCE_DIR) + "/bench/profiles/reduce_cub-measured.json";
  options.hosts = 4;
  options.repeat = 66;
  options.ms_per_second = 10;
  options.host_scan_fraction = 0.05;
  options.learn_first = false;
  options.work_dir = (dir.path() / "sim").string();
  auto report = bench::RunFleetSim(options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->actions_expected, 198 + 66);
  EXPECT_EQ(report->actions_completed, 198 + 66) << report->first_error;
  EXPECT_TRUE(report->Complete()) << report->first_error;

  auto torch =
      bench::LoadProfile(std::string(FARM_SOURCE_DIR) + "/bench/profiles/pytorch-2.9.1.json");
  ASSERT_TRUE(torch.ok()) << torch.status();
  const bench::LowerBounds here = bench::ComputeLowerBounds(*torch, 960, 64);
  const bench::LowerBounds farm = bench::ComputeLowerBounds(*torch, 960, 64, 0.05);
  EXPECT_EQ(here.Binding(), "build host");
  EXPECT_LT(farm.host_work_s, here.host_work_s / 4);
  EXPECT_GT(farm.device_work_s, here.device_work_s);
  EXPECT_EQ(farm.device_actions - here.device_actions, 6500 + 397);
}

}  // namespace
}  // namespace farm::testing
