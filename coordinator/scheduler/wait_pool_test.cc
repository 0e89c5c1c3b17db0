#include "coordinator/scheduler/wait_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

// Actions of argv alone: nothing to store or pin.
class NoBlobs : public BlobIndex {
 public:
  bool Contains(const farm::v1::Digest&) override { return false; }
  absl::StatusOr<std::string> Read(const farm::v1::Digest& d, int64_t) override {
    return absl::NotFoundError(d.hash());
  }
  void Pin(const std::string&, const std::vector<farm::v1::Digest>&) override {}
  void Unpin(const std::string&) override {}
};

// What one wait was answered with, and on which thread.
struct Answered {
  absl::Mutex mu;
  std::optional<absl::StatusOr<std::vector<farm::v1::ActionStatus>>> answer ABSL_GUARDED_BY(mu);
  absl::Notification done;
  WaitPool::Answer Callback() {
    return [this](absl::StatusOr<std::vector<farm::v1::ActionStatus>> statuses) {
      {
        absl::MutexLock lock(&mu);
        answer = std::move(statuses);
      }
      done.Notify();
    };
  }
  absl::StatusOr<std::vector<farm::v1::ActionStatus>> Get() {
    absl::MutexLock lock(&mu);
    return *answer;
  }
};

class WaitPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wait_pool_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    farm::v1::Worker w;
    w.set_name("w1");
    w.set_state(farm::v1::WORKER_STATE_ONLINE);
    w.mutable_capabilities()->set_os("linux");
    w.mutable_capabilities()->set_cpu_arch("x86_64");
    w.mutable_capabilities()->set_slots(2);
    worker_ = w;
    scheduler_ = std::make_unique<Scheduler>(
        store_.get(), &blobs_, [this] { return std::vector<farm::v1::Worker>{worker_}; }, &metrics_,
        SchedulerOptions{}, [] { return absl::Now(); });
    ASSERT_TRUE(scheduler_->Load().ok());
    pool_ = std::make_unique<WaitPool>(scheduler_.get());
  }
  void TearDown() override {
    pool_.reset();
    scheduler_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  std::string Submit(const std::string& what) {
    farm::v1::Action a;
    a.add_argv("true");
    a.add_argv(what);
    a.set_build_id("b1");
    auto s = scheduler_->Execute({a}, {.write = "admin", .read = {"admin"}});
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? s->front().action_id() : "";
  }
  void RunAll() {
    auto leases = scheduler_->Lease("w1", "s1", worker_.capabilities(), 4, absl::ZeroDuration());
    ASSERT_TRUE(leases.ok()) << leases.status();
    std::vector<farm::v1::Completion> done;
    for (const auto& l : *leases) {
      farm::v1::Completion c;
      c.set_lease_id(l.lease_id());
      c.set_action_id(l.action_id());
      c.mutable_result()->set_exit_code(0);
      done.push_back(c);
    }
    ASSERT_TRUE(scheduler_->Complete("w1", done).ok());
  }

  fs::path dir_;
  NoBlobs blobs_;
  MetricsRegistry metrics_;
  farm::v1::Worker worker_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<WaitPool> pool_;
};

TEST_F(WaitPoolTest, AWaitIsAnsweredWhenItsActionsEndAndHeldUntilThen) {
  const std::string a = Submit("a"), b = Submit("b");
  Answered answered;
  pool_->Add({a, b}, absl::Now() + absl::Minutes(1), answered.Callback());
  EXPECT_FALSE(answered.done.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
  EXPECT_EQ(pool_->waiting(), 1u);
  RunAll();
  ASSERT_TRUE(answered.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  auto statuses = answered.Get();
  ASSERT_TRUE(statuses.ok()) << statuses.status();
  ASSERT_EQ(statuses->size(), 2u);
  EXPECT_EQ((*statuses)[0].action_id(), a);
  for (const auto& s : *statuses) EXPECT_EQ(s.state(), farm::v1::ACTION_STATE_COMPLETED);
  EXPECT_EQ(pool_->waiting(), 0u);
}

TEST_F(WaitPoolTest, AtItsDeadlineAWaitIsAnsweredWithTheStatusesThen) {
  const std::string a = Submit("a");
  Answered answered;
  const absl::Time start = absl::Now();
  pool_->Add({a}, start + absl::Milliseconds(300), answered.Callback());
  ASSERT_TRUE(answered.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  auto statuses = answered.Get();
  ASSERT_TRUE(statuses.ok()) << statuses.status();
  EXPECT_EQ(statuses->front().state(), farm::v1::ACTION_STATE_QUEUED);
}

TEST_F(WaitPoolTest, AWaitAlreadyDoneOrForAnUnknownActionIsAnsweredAtOnce) {
  const std::string a = Submit("a");
  RunAll();
  Answered done;
  pool_->Add({a}, absl::Now() + absl::Minutes(1), done.Callback());
  EXPECT_TRUE(done.done.HasBeenNotified());  // on the caller's thread, before Add returns
  Answered unknown;
  pool_->Add({"no-such-action"}, absl::Now() + absl::Minutes(1), unknown.Callback());
  EXPECT_TRUE(unknown.done.HasBeenNotified());
  EXPECT_EQ(unknown.Get().status().code(), absl::StatusCode::kNotFound) << unknown.Get().status();
  EXPECT_EQ(pool_->waiting(), 0u);
}

// A launcher killed mid-call gives its place back at the next change, not at its deadline.
TEST_F(WaitPoolTest, AWaitWhoseCallerLeftIsAnsweredCancelledAtTheNextChange) {
  const std::string a = Submit("a");
  std::atomic<bool> gone{false};
  Answered answered;
  pool_->Add({a}, absl::Now() + absl::Minutes(5), answered.Callback(), [&] { return gone.load(); });
  EXPECT_FALSE(answered.done.WaitForNotificationWithTimeout(absl::Milliseconds(100)));
  gone = true;
  Submit("b");  // any change of the scheduler's actions
  ASSERT_TRUE(answered.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(answered.Get().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(pool_->waiting(), 0u);
}

TEST_F(WaitPoolTest, StopAnswersEveryOpenWaitAndLaterOnesAtOnce) {
  const std::string a = Submit("a");
  std::vector<std::unique_ptr<Answered>> open;
  for (int i = 0; i < 50; ++i) {
    open.push_back(std::make_unique<Answered>());
    pool_->Add({a}, absl::Now() + absl::Minutes(5), open.back()->Callback());
  }
  EXPECT_EQ(pool_->waiting(), 50u);
  pool_->Stop();
  for (auto& w : open) {
    ASSERT_TRUE(w->done.HasBeenNotified());
    EXPECT_EQ(w->Get()->front().state(), farm::v1::ACTION_STATE_QUEUED);
  }
  Answered later;
  pool_->Add({a}, absl::Now() + absl::Minutes(5), later.Callback());
  EXPECT_TRUE(later.done.HasBeenNotified());
}

}  // namespace
}  // namespace farm::coordinator
