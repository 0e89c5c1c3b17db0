#include "coordinator/wheels/wheel_finisher.h"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "coordinator/scheduler/blob_store_index.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kWheelBytes = 1000;
constexpr uint64_t kQuotaBytes = 3000;

class WheelFinisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("wheel_finisher_test_", ::getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = StateStore::Open((dir_ / "state").string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto blobs = BlobStore::Open((dir_ / "cas").string(), store_.get(), kQuotaBytes);
    ASSERT_TRUE(blobs.ok()) << blobs.status();
    blobs_ = std::move(*blobs);
    index_ = std::make_unique<BlobStoreIndex>(blobs_.get());
    builds_ = std::make_unique<BuildRegistry>(store_.get(), &metrics_, absl::Now);
    workers_ = std::make_unique<WorkerRegistry>(store_.get(), absl::Seconds(10), absl::Now);
    scheduler_ = std::make_unique<Scheduler>(
        store_.get(), index_.get(), [] { return std::vector<farm::v1::Worker>(); }, &metrics_,
        SchedulerOptions{}, absl::Now);
    ASSERT_TRUE(scheduler_->Load().ok());
    smoke_ = std::make_unique<SmokeStage>(builds_.get(), scheduler_.get(), workers_.get(),
                                          [] { return std::string(); });
    finisher_ = std::make_unique<WheelFinisher>(builds_.get(), nullptr, (dir_ / "wheels").string(),
                                                blobs_.get(), smoke_.get());
  }
  void TearDown() override {
    finisher_.reset();
    smoke_.reset();
    scheduler_.reset();
    builds_.reset();
    workers_.reset();
    index_.reset();
    blobs_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  // A wheel build smoke testing its verified wheel (of `n`'s bytes, in the CAS), its sm_75 test
  // queued: what FollowSmoke polls.
  std::string SmokeTestingBuild(int n, farm::v1::BuildPlan& plan) {
    const std::string bytes = std::string(kWheelBytes - 8, 'w') + absl::StrCat(10000000 + n);
    auto digest = blobs_->PutBytes(bytes);
    EXPECT_TRUE(digest.ok()) << digest.status();
    plan.set_archs("7.5");
    plan.set_python_version("3.11");
    plan.mutable_smoke()->set_require_gpu(true);
    auto build = builds_->CreateWheelBuild({.package = "demo", .version = "0.1.0", .plan = plan});
    EXPECT_TRUE(build.ok()) << build.status();
    farm::v1::WheelInfo wheel;
    wheel.set_filename("demo-0.1.0-py3-none-any.whl");
    wheel.set_size_bytes(kWheelBytes);
    wheel.set_sha256(digest->hash());
    EXPECT_TRUE(builds_->SetWheel(build->id(), wheel).ok());
    farm::v1::Action test;  // stands for the smoke test's action, queued for a GPU worker
    test.add_argv("wheelfarm-smoke-test");
    test.set_build_id(build->id());
    test.set_wait_for_worker(true);
    test.set_skip_cache(true);
    auto queued = scheduler_->Execute({test});
    EXPECT_TRUE(queued.ok()) << queued.status();
    farm::v1::SmokeResult result;
    result.set_sm("sm_75");
    result.set_gpu_sm("sm_75");
    result.set_state(kSmokeQueued);
    result.set_action_id(queued->front().action_id());
    EXPECT_TRUE(builds_->SetSmoke(build->id(), {result}).ok());
    EXPECT_TRUE(
        builds_->SetState(build->id(), farm::v1::BUILD_STATE_VERIFYING, "smoke testing").ok());
    wheels_.push_back(*digest);
    return build->id();
  }

  // Whether `wheel` is still held: a blob that needs all the room the others leave evicts it
  // unless it is pinned.
  bool Held(const farm::v1::Digest& wheel, int n) {
    auto filler = blobs_->PutBytes(std::string(kQuotaBytes - kWheelBytes / 2 - 8, 'f') +
                                   absl::StrCat(10000000 + n));
    return !filler.ok() || blobs_->Contains(wheel);
  }

  fs::path dir_;
  MetricsRegistry metrics_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<BlobStoreIndex> index_;
  std::unique_ptr<BuildRegistry> builds_;
  std::unique_ptr<WorkerRegistry> workers_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<SmokeStage> smoke_;
  std::unique_ptr<WheelFinisher> finisher_;
  std::vector<farm::v1::Digest> wheels_;
};

// Cancelling a build lets go of the wheel its smoke tests kept (WheelPipeline::Cancel: the
// build's state, then CancelSmoke), whenever the pipeline's poll of the build (FollowSmoke,
// which takes the pin again after a restart) runs beside it: a pin taken after the cancel
// let go would keep the wheel in the CAS until the coordinator restarts.
TEST_F(WheelFinisherTest, ACancelRacingTheSmokePollLeavesTheWheelUnpinned) {
  int held = 0;
  for (int n = 0; n < 100; ++n) {
    farm::v1::BuildPlan plan;
    const std::string id = SmokeTestingBuild(n, plan);
    std::thread poll([&] { finisher_->FollowSmoke(id, plan).IgnoreError(); });
    std::thread cancel([&] {
      ASSERT_TRUE(builds_->SetState(id, farm::v1::BUILD_STATE_CANCELLED, "cancelled").ok());
      finisher_->CancelSmoke(id);
    });
    poll.join();
    cancel.join();
    if (Held(wheels_.back(), n)) ++held;
    blobs_->Unpin(absl::StrCat(id, "/smoke"));  // each try on its own
  }
  EXPECT_EQ(held, 0) << "wheels of cancelled builds still pinned";
}

}  // namespace
}  // namespace farm::coordinator
