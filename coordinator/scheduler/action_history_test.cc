#include "coordinator/scheduler/action_history.h"

#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
const std::vector<std::string> kAdmin = {"admin"};

farm::v1::Action WithInput(const std::string& key, int64_t input_bytes) {
  farm::v1::Action a;
  a.set_history_key(key);
  auto* in = a.add_inputs();
  in->set_path("k.cpp1.ii");
  in->mutable_digest()->set_size_bytes(input_bytes);
  return a;
}

farm::v1::ActionResult Ran(double seconds, uint64_t peak) {
  farm::v1::ActionResult r;
  r.set_wall_seconds(seconds);
  r.set_peak_rss_bytes(peak);
  return r;
}

TEST(ActionHistoryTest, UnknownActionsAreEstimatedFromTheirInputSize) {
  ActionHistory history;
  const ExpectedCost small = history.Expect(WithInput("a", 64 * 1024), kAdmin);
  const ExpectedCost large = history.Expect(WithInput("b", 640 * 1024), kAdmin);
  EXPECT_FALSE(small.learnt);
  EXPECT_DOUBLE_EQ(small.seconds, 1.0);
  EXPECT_DOUBLE_EQ(large.seconds, 10.0);
  EXPECT_EQ(large.peak_ram_bytes, 0u);
  // Once runs are learnt, their seconds per input byte take over from the default.
  StateBatch batch;
  history.Learn(WithInput("c", 1000), "admin", Ran(4, 0), batch);
  EXPECT_DOUBLE_EQ(history.Expect(WithInput("d", 500), kAdmin).seconds, 2.0);
}

TEST(ActionHistoryTest, LearnsAMovingAverageAndAPeakThatDecaysSlowly) {
  ActionHistory history;
  StateBatch batch;
  const farm::v1::Action a = WithInput("flash_bwd.cu sm_90", 1000);
  history.Learn(a, "admin", Ran(100, 8 * kGiB), batch);
  EXPECT_FALSE(batch.empty());
  ExpectedCost cost = history.Expect(a, kAdmin);
  EXPECT_TRUE(cost.learnt);
  EXPECT_DOUBLE_EQ(cost.seconds, 100);
  EXPECT_EQ(cost.peak_ram_bytes, 8 * kGiB);
  history.Learn(a, "admin", Ran(50, 4 * kGiB), batch);
  cost = history.Expect(a, kAdmin);
  EXPECT_DOUBLE_EQ(cost.seconds, 75);
  EXPECT_EQ(cost.peak_ram_bytes, 6 * kGiB);  // 0.75 of 8, above the newest 4
  history.Learn(a, "admin", Ran(50, 7 * kGiB), batch);
  EXPECT_EQ(history.Expect(a, kAdmin).peak_ram_bytes, 7 * kGiB);  // never below the newest
  EXPECT_DOUBLE_EQ(history.LearntSeconds(kAdmin, "flash_bwd.cu sm_90"),
                   history.Expect(a, kAdmin).seconds);
  EXPECT_EQ(history.LearntSeconds(kAdmin, "flash_bwd.cu sm_75"), 0);  // nothing learnt: no estimate
}

TEST(ActionHistoryTest, FailuresAndCacheHitsTeachNothing) {
  ActionHistory history;
  StateBatch batch;
  farm::v1::ActionResult failed = Ran(3, kGiB);
  failed.set_exit_code(1);
  history.Learn(WithInput("k", 10), "admin", failed, batch);
  farm::v1::ActionResult hit = Ran(0.01, 0);
  hit.set_cache_hit(true);
  history.Learn(WithInput("k", 10), "admin", hit, batch);
  EXPECT_TRUE(batch.empty());
  EXPECT_FALSE(history.Expect(WithInput("k", 10), kAdmin).learnt);
}

// A first build: nothing learnt, so the launcher's hint stands in for the input size, and
// once a run of the key is learnt the history wins over the hint.
TEST(ActionHistoryTest, AHintStandsInOnlyUntilARunIsLearnt) {
  ActionHistory history;
  farm::v1::Action hinted = WithInput("flash_bwd_hdim256.cu sm_90", 10);
  hinted.set_expected_seconds(900);
  ExpectedCost cost = history.Expect(hinted, kAdmin);
  EXPECT_DOUBLE_EQ(cost.seconds, 900);
  EXPECT_FALSE(cost.learnt);
  EXPECT_LT(history.Expect(WithInput("Sort.cu sm_90", 10), kAdmin).seconds, 1);
  StateBatch batch;
  history.Learn(hinted, "admin", Ran(700, kGiB), batch);
  cost = history.Expect(hinted, kAdmin);
  EXPECT_TRUE(cost.learnt);
  EXPECT_DOUBLE_EQ(cost.seconds, 700);
}

TEST(ActionHistoryTest, TheRamARequirementNamesIsTheLeastExpected) {
  ActionHistory history;
  farm::v1::Action a = WithInput("k", 10);
  a.mutable_requirements()->set_min_ram_bytes(3 * kGiB);
  EXPECT_EQ(history.Expect(a, kAdmin).peak_ram_bytes, 3 * kGiB);
}

TEST(ActionHistoryTest, HoldsAtMostMaxKeysDroppingTheOldestLearnt) {
  ActionHistory history(2);
  StateBatch batch;
  history.Learn(WithInput("first", 10), "admin", Ran(1, 0), batch);
  history.Learn(WithInput("second", 10), "admin", Ran(1, 0), batch);
  history.Learn(WithInput("first", 10), "admin", Ran(1, 0), batch);  // learnt again: now the newest
  history.Learn(WithInput("third", 10), "admin", Ran(1, 0), batch);
  EXPECT_EQ(history.size(), 2u);
  EXPECT_TRUE(history.Expect(WithInput("first", 10), kAdmin).learnt);
  EXPECT_FALSE(history.Expect(WithInput("second", 10), kAdmin).learnt);
  EXPECT_TRUE(history.Expect(WithInput("third", 10), kAdmin).learnt);
}

// What one tenant's builds teach is theirs: kept under its scope, read only through it.
TEST(ActionHistoryTest, HistoryIsKeptAndReadPerScope) {
  ActionHistory history;
  StateBatch batch;
  const farm::v1::Action unit = WithInput("Sort.cu sm_90", 10);
  history.Learn(unit, "builds/token:victim/torch", Ran(0.02, 0), batch);
  // The attacker's own run of the same key lands in its own scope only.
  history.Learn(unit, "token:attacker", Ran(4.5, 0), batch);
  EXPECT_DOUBLE_EQ(history.LearntSeconds({"builds/token:victim/torch", "admin"}, "Sort.cu sm_90"),
                   0.02);
  EXPECT_DOUBLE_EQ(history.LearntSeconds({"token:attacker", "admin"}, "Sort.cu sm_90"), 4.5);
  EXPECT_EQ(history.LearntSeconds({"token:other", "admin"}, "Sort.cu sm_90"), 0);
  // Reads fall through to the next scope, first found wins.
  history.Learn(unit, "admin", Ran(1, 0), batch);
  EXPECT_DOUBLE_EQ(history.LearntSeconds({"token:other", "admin"}, "Sort.cu sm_90"), 1);
  EXPECT_DOUBLE_EQ(history.Expect(unit, {"builds/token:victim/torch", "admin"}).seconds, 0.02);
  // Nothing is kept per key without a scope (the coordinator's own actions).
  history.Learn(WithInput("own", 10), "", Ran(9, 0), batch);
  EXPECT_EQ(history.LearntSeconds({""}, "own"), 0);
}

}  // namespace
}  // namespace farm::coordinator
