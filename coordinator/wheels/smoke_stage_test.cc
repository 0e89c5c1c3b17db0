#include "coordinator/wheels/smoke_stage.h"

#include <unistd.h>

#include <filesystem>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"

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

// The CAS holds every blob; pins are not this test's business.
class AllBlobs : public BlobIndex {
 public:
  bool Contains(const farm::v1::Digest&) override { return true; }
  absl::StatusOr<std::string> Read(const farm::v1::Digest& d, int64_t) override {
    return absl::NotFoundError(d.hash());
  }
  void Pin(const std::string&, const std::vector<farm::v1::Digest>&) override {}
  void Unpin(const std::string&) override {}
};

class SmokeStageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("smoke_stage_test_", ::getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    builds_ = std::make_unique<BuildRegistry>(store_.get(), &metrics_, [this] { return now_; });
    workers_ =
        std::make_unique<WorkerRegistry>(store_.get(), absl::Minutes(1), [this] { return now_; });
    scheduler_ = std::make_unique<Scheduler>(
        store_.get(), &blobs_, [this] { return workers_->ListOnline(); }, &metrics_,
        SchedulerOptions{}, [this] { return now_; });
    ASSERT_TRUE(scheduler_->Load().ok());
    stage_ = std::make_unique<SmokeStage>(
        builds_.get(), scheduler_.get(), workers_.get(), [] { return std::string(); },
        [this] { return now_; });
  }
  void TearDown() override {
    stage_.reset();
    scheduler_.reset();
    workers_.reset();
    builds_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void GpuWorkerOnline(const std::string& name, const std::string& sm) {
    farm::v1::WorkerCapabilities caps = GpuWorker(name, {sm}).capabilities();
    caps.set_os("linux");
    caps.set_slots(1);
    ASSERT_TRUE(workers_->Register(name, caps, "ipv4:127.0.0.1:1", name, "farm").ok());
  }

  // A verified wheel build of `archs` smoke testing (with require_gpu or not), each SM's test
  // queued as the action `action_id`.
  std::string SmokeTesting(const std::string& archs, bool require_gpu,
                           const std::string& action_id) {
    farm::v1::BuildPlan plan;
    plan.set_archs(archs);
    plan.set_python_version("3.11");
    plan.set_cpu_arch("x86_64");
    plan.set_cuda_version("13.0");
    plan.mutable_smoke()->set_require_gpu(require_gpu);
    auto build = builds_->CreateWheelBuild({.package = "demo", .version = "0.1.0", .plan = plan});
    EXPECT_TRUE(build.ok()) << build.status();
    farm::v1::WheelInfo wheel;
    wheel.set_filename("demo-0.1.0-py3-none-any.whl");
    wheel.set_size_bytes(10);
    wheel.set_sha256(DigestOfBytes("the wheel").hash());
    EXPECT_TRUE(builds_->SetWheel(build->id(), wheel).ok());
    std::vector<farm::v1::SmokeResult> results;
    for (const ArchRequest& r : Archs(archs).requests) {
      farm::v1::SmokeResult result;
      result.set_sm(r.target.SmName());
      result.set_gpu_sm(r.target.SmName());
      result.set_state(kSmokeQueued);
      result.set_action_id(action_id);
      results.push_back(result);
    }
    EXPECT_TRUE(builds_->SetSmoke(build->id(), results).ok());
    EXPECT_TRUE(
        builds_->SetState(build->id(), farm::v1::BUILD_STATE_VERIFYING, "smoke testing").ok());
    return build->id();
  }

  farm::v1::SmokeResult SmokeOf(const std::string& id) {
    auto build = builds_->Get(id);
    EXPECT_TRUE(build.ok()) << build.status();
    return build.ok() && build->smoke_size() > 0 ? build->smoke(0) : farm::v1::SmokeResult();
  }

  std::string LogOf(const std::string& id) {
    auto log = builds_->ReadLog(id, 0, 1 << 20);
    return log.ok() ? log->data() : "";
  }

  std::filesystem::path dir_;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  MetricsRegistry metrics_;
  AllBlobs blobs_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<BuildRegistry> builds_;
  std::unique_ptr<WorkerRegistry> workers_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<SmokeStage> stage_;
};

// A test whose action the coordinator no longer has (lost across a restart: its record left
// the store) is placed again, as when the smoke tests started: queued on a GPU worker that
// runs it, not reported "not run", which with require_gpu would fail the build.
TEST_F(SmokeStageTest, ATestWhoseActionIsGoneIsQueuedAgain) {
  GpuWorkerOnline("gpu1", "sm_90");
  const std::string id = SmokeTesting("9.0", /*require_gpu=*/true, "0000000000000000dead0000");
  auto done = stage_->Advance(id);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(*done);
  const farm::v1::SmokeResult r = SmokeOf(id);
  EXPECT_EQ(r.state(), kSmokeQueued) << r.DebugString() << LogOf(id);
  ASSERT_NE(r.action_id(), "0000000000000000dead0000");
  auto action = scheduler_->Get(r.action_id());
  ASSERT_TRUE(action.ok()) << action.status();
  EXPECT_EQ(action->state(), farm::v1::ACTION_STATE_QUEUED);
  EXPECT_EQ(action->build_id(), id);
  EXPECT_THAT(LogOf(id), HasSubstr("wheelfarm: smoke test sm_90: its action is gone"));
  EXPECT_THAT(LogOf(id), HasSubstr("wheelfarm: smoke test sm_90: queued for a sm_90 GPU"));
}

// With no GPU worker online that runs it, the lost test waits for one (require_gpu), or is
// not run, as a test placed at the start would be.
TEST_F(SmokeStageTest, ATestWhoseActionIsGoneWaitsOrIsNotRunWithoutAGpuWorker) {
  const std::string required =
      SmokeTesting("7.5", /*require_gpu=*/true, "0000000000000000dead0001");
  ASSERT_FALSE(*stage_->Advance(required));
  EXPECT_EQ(SmokeOf(required).state(), kSmokeWaiting) << SmokeOf(required).DebugString();
  EXPECT_EQ(SmokeOf(required).waiting_since().seconds(), absl::ToUnixSeconds(now_));

  const std::string optional =
      SmokeTesting("7.5", /*require_gpu=*/false, "0000000000000000dead0002");
  ASSERT_TRUE(*stage_->Advance(optional));
  EXPECT_EQ(SmokeOf(optional).state(), kSmokeNotRun);
  EXPECT_THAT(SmokeOf(optional).reason(), HasSubstr("no online GPU worker"));
}

}  // namespace
}  // namespace farm::coordinator
