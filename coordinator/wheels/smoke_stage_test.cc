#include "coordinator/wheels/smoke_stage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

using ::testing::HasSubstr;

farm::v1::Worker GpuWorker(const std::string& name, const std::vector<std::string>& sms,
                           const std::string& cpu = "x86_64", const std::string& python = "3.11") {
  farm::v1::Worker w;
  w.set_name(name);
  w.mutable_capabilities()->set_cpu_arch(cpu);
  w.mutable_capabilities()->add_python()->set_version(python);
  for (const auto& sm : sms) w.mutable_capabilities()->add_gpus()->set_sm(sm);
  return w;
}

ArchList Archs(const std::string& text) {
  auto archs = ParseArchList(text);
  EXPECT_TRUE(archs.ok()) << archs.status();
  return archs.ok() ? *archs : ArchList{};
}

TEST(PlaceSmokeTestsTest, PrefersTheExactGpuThenOneTheCodeRunsOn) {
  const auto results = PlaceSmokeTests(Archs("7.5;9.0;12.0;8.0+PTX"),
                                       {GpuWorker("a", {"sm_90", "sm_121"})}, "3.11", "x86_64");
  ASSERT_EQ(results.size(), 4u);
  // Sorted by target: 7.5, 8.0+PTX, 9.0, 12.0.
  EXPECT_EQ(results[0].sm(), "sm_75");
  EXPECT_EQ(results[0].state(), kSmokeNotRun);
  EXPECT_THAT(results[0].reason(), HasSubstr("no online GPU worker with python3.11 on x86_64 "
                                             "runs sm_75 (GPUs online: sm_121 on a, sm_90 on a)"));
  EXPECT_EQ(results[1].sm(), "sm_80");  // its PTX runs on the newer GPU, by JIT
  EXPECT_EQ(results[1].gpu_sm(), "sm_90");
  EXPECT_EQ(results[2].gpu_sm(), "sm_90");
  EXPECT_EQ(results[3].sm(), "sm_120");  // sm_120 SASS runs on a 12.1 GPU
  EXPECT_EQ(results[3].gpu_sm(), "sm_121");
  EXPECT_EQ(results[3].state(), kSmokeQueued);
}

TEST(PlaceSmokeTestsTest, AGpuOnAWorkerThatCannotInstallTheWheelDoesNotCount) {
  for (const auto& w :
       {GpuWorker("arm", {"sm_90"}, "aarch64"), GpuWorker("py310", {"sm_90"}, "x86_64", "3.10")}) {
    const auto results = PlaceSmokeTests(Archs("9.0"), {w}, "3.11", "x86_64");
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].state(), kSmokeNotRun) << w.name();
  }
  EXPECT_THAT(PlaceSmokeTests(Archs("9.0"), {}, "3.11", "x86_64")[0].reason(),
              HasSubstr("(no GPU online)"));
}

TEST(PlaceSmokeTestsTest, WithRequireGpuAnSmNoGpuRunsWaitsSayingForWhat) {
  const auto results = PlaceSmokeTests(Archs("7.5;9.0"), {GpuWorker("a", {"sm_90"})}, "3.11",
                                       "x86_64", /*wait_for_gpu=*/true);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].state(), kSmokeWaiting);
  EXPECT_EQ(results[0].reason(),
            "waiting for a GPU worker with python3.11 on x86_64 that runs sm_75 (none online; "
            "GPUs online: sm_90 on a)");
  EXPECT_EQ(results[1].state(), kSmokeQueued);  // one a GPU runs is queued as before
  EXPECT_THAT(PlaceSmokeTests(Archs("9.0"), {}, "", "", true)[0].reason(),
              HasSubstr("waiting for a GPU worker that runs sm_90 (none online; no GPU online)"));
}

TEST(EndOverdueWaitTest, AWaitEndsAfterTheRecipesGpuWaitNamingTheSmAndHowLong) {
  farm::v1::RecipeSmoke smoke;
  smoke.set_require_gpu(true);
  EXPECT_EQ(GpuWait(smoke), absl::Hours(6));  // a plan made before gpu_wait existed
  smoke.set_gpu_wait_seconds(3);
  EXPECT_EQ(GpuWait(smoke), absl::Seconds(3));
  const absl::Time since = absl::FromUnixSeconds(1000);
  farm::v1::SmokeResult r = PlaceSmokeTests(Archs("7.5"), {}, "3.11", "", true)[0];
  r.mutable_waiting_since()->set_seconds(1000);
  EXPECT_FALSE(EndOverdueWait(smoke, since + absl::Seconds(2), &r));
  EXPECT_EQ(r.state(), kSmokeWaiting);
  EXPECT_TRUE(EndOverdueWait(smoke, since + absl::Seconds(3), &r));
  EXPECT_EQ(r.state(), kSmokeNotRun);
  EXPECT_EQ(r.reason(),
            "waited 3s (the recipe's [smoke] gpu_wait) for a GPU worker with python3.11 that runs "
            "sm_75 (none online; no GPU online)");
  EXPECT_FALSE(EndOverdueWait(smoke, since + absl::Hours(1), &r));  // only a waiting one

  // Not run at the end of its wait, with require_gpu: the build fails with the fix.
  std::vector<std::string> marked;
  const absl::Status s = SmokeVerdict(smoke, {r}, &marked);
  EXPECT_THAT(std::string(s.message()), HasSubstr("sm_75 was not smoke-tested: waited 3s"));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("Fix: bring a GPU worker that runs sm_75 online (farm-worker --gpu sm_75) "
                        "and submit again, or set require_gpu = false in the recipe's [smoke]"));
}

TEST(SmokeSummaryTest, AWaitingSmSaysWhatItWaitsFor) {
  google::protobuf::RepeatedPtrField<farm::v1::SmokeResult> results;
  auto* passed = results.Add();
  passed->set_sm("sm_90");
  passed->set_state(kSmokePassed);
  passed->set_worker("a");
  *results.Add() = PlaceSmokeTests(Archs("7.5"), {}, "", "", true)[0];
  EXPECT_EQ(SmokeSummary(results),
            "sm_90 passed on a; sm_75 waiting for a GPU worker that runs sm_75 (none online; no "
            "GPU online)");
  EXPECT_EQ(SmokeStage::WaitingSms(results), "sm_75");
}

TEST(SmokeVerdictTest, FollowsTheRecipesPolicy) {
  farm::v1::SmokeResult failed;
  failed.set_sm("sm_90");
  failed.set_state(kSmokeFailed);
  failed.set_worker("a");
  failed.set_reason("exit code 1");
  farm::v1::SmokeResult not_run;
  not_run.set_sm("sm_75");
  not_run.set_state(kSmokeNotRun);
  not_run.set_reason("no online GPU worker runs sm_75");
  farm::v1::RecipeSmoke block;
  block.set_on_failure("block");
  std::vector<std::string> marked;
  absl::Status s = SmokeVerdict(block, {failed, not_run}, &marked);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("the smoke test failed on sm_90 (a): exit code 1"));
  EXPECT_THAT(marked, ::testing::ElementsAre(HasSubstr("sm_75 was not smoke-tested")));

  farm::v1::RecipeSmoke mark;
  mark.set_on_failure("mark");
  marked.clear();
  EXPECT_TRUE(SmokeVerdict(mark, {failed, not_run}, &marked).ok());
  EXPECT_EQ(marked.size(), 2u);

  mark.set_require_gpu(true);
  marked.clear();
  s = SmokeVerdict(mark, {not_run}, &marked);
  EXPECT_THAT(std::string(s.message()), HasSubstr("sm_75 was not smoke-tested"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("require_gpu = true"));
}

}  // namespace
}  // namespace farm::coordinator
