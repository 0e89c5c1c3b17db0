#include "coordinator/workers/worker_registry.h"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class WorkerRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("worker_registry_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    registry_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  void Reopen() {
    registry_.reset();
    store_.reset();
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    registry_ =
        std::make_unique<WorkerRegistry>(store_.get(), absl::Seconds(10), [this] { return now_; });
    ASSERT_TRUE(registry_->Load().ok());
    registry_->SetSessionEndedHandler([this](const std::string&, const std::string& session, bool) {
      ended_.push_back(session);
    });
  }
  farm::v1::WorkerCapabilities Caps(uint32_t slots) {
    farm::v1::WorkerCapabilities c;
    c.set_cpu_arch("aarch64");
    c.set_slots(slots);
    auto* cuda = c.add_cuda();
    cuda->set_version("13.0");
    cuda->add_sms("sm_90");
    return c;
  }
  farm::v1::WorkerState StateOf(const std::string& name) {
    for (const auto& w : registry_->List()) {
      if (w.name() == name) return w.state();
    }
    return farm::v1::WORKER_STATE_UNSPECIFIED;
  }

  fs::path dir_;
  absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<WorkerRegistry> registry_;
  std::vector<std::string> ended_;  // sessions the registry ended
};

TEST_F(WorkerRegistryTest, SilentWorkerBecomesLostAndReturnsOnline) {
  auto session = registry_->Register("w1", Caps(2), "ipv4:127.0.0.1:1");
  ASSERT_TRUE(session.ok());
  now_ += absl::Seconds(9);
  ASSERT_TRUE(registry_->Sweep().ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_ONLINE);
  now_ += absl::Seconds(2);
  ASSERT_TRUE(registry_->Sweep().ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_LOST);
  EXPECT_EQ(registry_->Counts().lost, 1u);
  ASSERT_TRUE(registry_->Heartbeat("w1", *session, false, 0).ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_ONLINE);
  EXPECT_EQ(registry_->Counts().slots_online, 2u);
}

TEST_F(WorkerRegistryTest, StaleOrUnknownSessionsMustRegisterAgain) {
  auto first = registry_->Register("w1", Caps(2), "p");
  auto second = registry_->Register("w1", Caps(2), "p");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(*first, *second);
  EXPECT_EQ(registry_->Heartbeat("w1", *first, false, 0).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(registry_->Heartbeat("w1", *second, false, 0).ok());
  EXPECT_EQ(registry_->Heartbeat("nobody", *second, false, 0).code(), absl::StatusCode::kNotFound);
}

TEST_F(WorkerRegistryTest, ATakenNameIsRefusedToAnotherInstanceWhileItsHolderLives) {
  auto first = registry_->Register("w1", Caps(2), "ipv4:10.0.0.1:1", "aaaa");
  ASSERT_TRUE(first.ok());
  auto impostor = registry_->Register("w1", Caps(8), "ipv4:10.0.0.2:1", "bbbb");
  ASSERT_EQ(impostor.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(impostor.status().message(), HasSubstr("'w1' is taken by a live worker"));
  EXPECT_THAT(impostor.status().message(), HasSubstr("ipv4:10.0.0.1:1"));
  EXPECT_THAT(impostor.status().message(), HasSubstr("Fix:"));
  // Nothing of the first session changed: no takeover, no ended session.
  EXPECT_TRUE(registry_->Heartbeat("w1", *first, false, 0).ok());
  EXPECT_EQ(registry_->List()[0].capabilities().slots(), 2u);
  EXPECT_TRUE(ended_.empty());
  // An empty id is an identity of its own, not a wildcard.
  EXPECT_EQ(registry_->Register("w1", Caps(2), "p").status().code(),
            absl::StatusCode::kAlreadyExists);

  // The same instance (a restart) takes its name back at once.
  auto restarted = registry_->Register("w1", Caps(2), "ipv4:10.0.0.1:2", "aaaa");
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  EXPECT_EQ(registry_->Heartbeat("w1", *first, false, 0).code(),
            absl::StatusCode::kFailedPrecondition);

  // Once the holder is silent past the timeout (or gone), another instance may have the name.
  now_ += absl::Seconds(11);
  auto successor = registry_->Register("w1", Caps(4), "ipv4:10.0.0.3:1", "cccc");
  ASSERT_TRUE(successor.ok()) << successor.status();
  EXPECT_EQ(registry_->List()[0].instance_id(), "cccc");
}

TEST_F(WorkerRegistryTest, DrainAndLeave) {
  auto session = registry_->Register("w1", Caps(2), "p");
  ASSERT_TRUE(registry_->Heartbeat("w1", *session, true, 1).ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_DRAINING);
  ASSERT_TRUE(registry_->Leave("w1", *session).ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_OFFLINE);
  // An offline worker is not swept into lost.
  now_ += absl::Hours(1);
  ASSERT_TRUE(registry_->Sweep().ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_OFFLINE);
}

TEST_F(WorkerRegistryTest, RegistrySurvivesRestartWithSessionsAndGrace) {
  auto session = registry_->Register("w1", Caps(3), "p");
  ASSERT_TRUE(registry_->Register("w2", Caps(1), "p").ok());
  now_ += absl::Seconds(5);
  Reopen();
  ASSERT_EQ(registry_->List().size(), 2u);
  EXPECT_EQ(registry_->List()[0].capabilities().slots(), 3u);
  // The old session keeps working after the restart.
  EXPECT_TRUE(registry_->Heartbeat("w1", *session, false, 0).ok());
  // Each worker gets a full timeout from the restart, not from its last heartbeat.
  now_ += absl::Seconds(8);
  ASSERT_TRUE(registry_->Sweep().ok());
  EXPECT_EQ(StateOf("w2"), farm::v1::WORKER_STATE_ONLINE);
  ASSERT_TRUE(registry_->Heartbeat("w1", *session, false, 0).ok());
  now_ += absl::Seconds(3);
  ASSERT_TRUE(registry_->Sweep().ok());
  EXPECT_EQ(StateOf("w2"), farm::v1::WORKER_STATE_LOST);
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_ONLINE);
  // The lost state itself is durable.
  Reopen();
  EXPECT_EQ(StateOf("w2"), farm::v1::WORKER_STATE_LOST);
}

}  // namespace
}  // namespace farm::coordinator
