#include "coordinator/workers/worker_registry.h"

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "farm/v1/state.pb.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Ids of two worker tokens.
constexpr char kTokenA[] = "a0a0a0a0a0a0";
constexpr char kTokenB[] = "b1b1b1b1b1b1";

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
  // The registry's calls as worker-service calls with token `kTokenA` make them.
  absl::StatusOr<std::string> Register(const std::string& name,
                                       const farm::v1::WorkerCapabilities& caps,
                                       const std::string& peer, const std::string& instance = "",
                                       const std::string& token = kTokenA) {
    return registry_->Register(name, caps, peer, instance, token);
  }
  absl::Status Heartbeat(const std::string& name, const std::string& session, bool draining,
                         uint32_t slots, const std::string& token = kTokenA) {
    return registry_->Heartbeat({name, session, token}, draining, slots);
  }
  absl::Status Leave(const std::string& name, const std::string& session,
                     const std::string& token = kTokenA) {
    return registry_->Leave({name, session, token});
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
  auto session = Register("w1", Caps(2), "ipv4:127.0.0.1:1");
  ASSERT_TRUE(session.ok());
  now_ += absl::Seconds(9);
  ASSERT_TRUE(registry_->Sweep().ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_ONLINE);
  now_ += absl::Seconds(2);
  ASSERT_TRUE(registry_->Sweep().ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_LOST);
  EXPECT_EQ(registry_->Counts().lost, 1u);
  ASSERT_TRUE(Heartbeat("w1", *session, false, 0).ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_ONLINE);
  EXPECT_EQ(registry_->Counts().slots_online, 2u);
}

TEST_F(WorkerRegistryTest, StaleOrUnknownSessionsMustRegisterAgain) {
  auto first = Register("w1", Caps(2), "p");
  auto second = Register("w1", Caps(2), "p");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(*first, *second);
  EXPECT_EQ(Heartbeat("w1", *first, false, 0).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Heartbeat("w1", *second, false, 0).ok());
  EXPECT_EQ(Heartbeat("nobody", *second, false, 0).code(), absl::StatusCode::kNotFound);
}

TEST_F(WorkerRegistryTest, ATakenNameIsRefusedToAnotherInstanceWhileItsHolderLives) {
  auto first = Register("w1", Caps(2), "ipv4:10.0.0.1:1", "aaaa");
  ASSERT_TRUE(first.ok());
  auto impostor = Register("w1", Caps(8), "ipv4:10.0.0.2:1", "bbbb");
  ASSERT_EQ(impostor.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(impostor.status().message(), HasSubstr("'w1' is taken by a live worker"));
  EXPECT_THAT(impostor.status().message(), HasSubstr("ipv4:10.0.0.1:1"));
  EXPECT_THAT(impostor.status().message(), HasSubstr("Fix:"));
  // Nothing of the first session changed: no takeover, no ended session.
  EXPECT_TRUE(Heartbeat("w1", *first, false, 0).ok());
  EXPECT_EQ(registry_->List()[0].capabilities().slots(), 2u);
  EXPECT_TRUE(ended_.empty());
  // An empty id is an identity of its own, not a wildcard.
  EXPECT_EQ(Register("w1", Caps(2), "p").status().code(), absl::StatusCode::kAlreadyExists);

  // The same instance (a restart) takes its name back at once.
  auto restarted = Register("w1", Caps(2), "ipv4:10.0.0.1:2", "aaaa");
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  EXPECT_EQ(Heartbeat("w1", *first, false, 0).code(), absl::StatusCode::kFailedPrecondition);

  // Once the holder is silent past the timeout (or gone), another instance may have the name.
  now_ += absl::Seconds(11);
  auto successor = Register("w1", Caps(4), "ipv4:10.0.0.3:1", "cccc");
  ASSERT_TRUE(successor.ok()) << successor.status();
  EXPECT_EQ(registry_->List()[0].instance_id(), "cccc");
}

TEST_F(WorkerRegistryTest, DrainAndLeave) {
  auto session = Register("w1", Caps(2), "p");
  ASSERT_TRUE(Heartbeat("w1", *session, true, 1).ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_DRAINING);
  ASSERT_TRUE(Leave("w1", *session).ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_OFFLINE);
  // An offline worker is not swept into lost.
  now_ += absl::Hours(1);
  ASSERT_TRUE(registry_->Sweep().ok());
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_OFFLINE);
}

TEST_F(WorkerRegistryTest, RegistrySurvivesRestartWithSessionsAndGrace) {
  auto session = Register("w1", Caps(3), "p");
  ASSERT_TRUE(Register("w2", Caps(1), "p").ok());
  now_ += absl::Seconds(5);
  Reopen();
  ASSERT_EQ(registry_->List().size(), 2u);
  EXPECT_EQ(registry_->List()[0].capabilities().slots(), 3u);
  // The old session keeps working after the restart.
  EXPECT_TRUE(Heartbeat("w1", *session, false, 0).ok());
  // Each worker gets a full timeout from the restart, not from its last heartbeat.
  now_ += absl::Seconds(8);
  ASSERT_TRUE(registry_->Sweep().ok());
  EXPECT_EQ(StateOf("w2"), farm::v1::WORKER_STATE_ONLINE);
  ASSERT_TRUE(Heartbeat("w1", *session, false, 0).ok());
  now_ += absl::Seconds(3);
  ASSERT_TRUE(registry_->Sweep().ok());
  EXPECT_EQ(StateOf("w2"), farm::v1::WORKER_STATE_LOST);
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_ONLINE);
  // The lost state itself is durable.
  Reopen();
  EXPECT_EQ(StateOf("w2"), farm::v1::WORKER_STATE_LOST);
}

// Issue 24, hole 6: a worker proves who it is on every call, not only at registration.
TEST_F(WorkerRegistryTest, EveryCallMustCarryTheTokenTheNameIsBoundTo) {
  auto session = Register("w1", Caps(2), "p");
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(Heartbeat("w1", *session, false, 1).ok());
  // Token B knows A's worker name and session: it may not drain, lease for or end it.
  for (const absl::Status& refused :
       {Heartbeat("w1", *session, true, 0, kTokenB), Leave("w1", *session, kTokenB),
        registry_->SessionCapabilities({"w1", *session, kTokenB}).status(),
        // Whatever the session: B learns nothing about it.
        Heartbeat("w1", "guess", true, 0, kTokenB)}) {
    EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied) << refused;
    EXPECT_THAT(refused.message(), HasSubstr("worker name 'w1' is bound to token a0a0a0a0a0a0"));
    EXPECT_THAT(refused.message(), HasSubstr("Fix:"));
  }
  // Nothing changed: still online, its slots as A said, its session alive.
  EXPECT_EQ(StateOf("w1"), farm::v1::WORKER_STATE_ONLINE);
  EXPECT_EQ(registry_->List()[0].slots_in_use(), 1u);
  EXPECT_TRUE(ended_.empty());
  EXPECT_TRUE(Heartbeat("w1", *session, false, 0).ok());
  EXPECT_TRUE(registry_->SessionCapabilities({"w1", *session, kTokenA}).ok());
}

TEST_F(WorkerRegistryTest, SessionIdsAreUnguessableAndNeverListed) {
  auto session = Register("w1", Caps(2), "p");
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->size(), 32u) << "128 random bits, hex";
  EXPECT_NE(*Register("w2", Caps(2), "p"), *session);
  auto listed_bytes = [&] {
    std::string all;
    for (const auto& w : registry_->List()) all += w.SerializeAsString();
    return all;
  };
  EXPECT_EQ(listed_bytes().find(*session), std::string::npos);
  // Stored beside the record, it survives a restart, and still stays out of the listing.
  Reopen();
  EXPECT_EQ(listed_bytes().find(*session), std::string::npos);
  EXPECT_TRUE(Heartbeat("w1", *session, false, 0).ok());
}

TEST_F(WorkerRegistryTest, RecordsStoredBeforeTheSessionLeftWorkerKeepTheirSession) {
  // What earlier coordinators stored: a Worker with the session at number 4.
  farm::v1::Worker old;
  old.set_name("w1");
  old.set_state(farm::v1::WORKER_STATE_ONLINE);
  *old.mutable_capabilities() = Caps(2);
  old.set_registered_by(kTokenA);
  farm::v1::WorkerSession session;
  session.set_session_id("0123456789abcdef0123456789abcdef");
  farm::v1::Worker stored = old;
  ASSERT_TRUE(stored.MergeFromString(session.SerializeAsString()));
  ASSERT_TRUE(store_->Put(Table::kWorkers, "w1", stored).ok());
  // And one from before names were bound to tokens.
  old.set_name("w0");
  old.clear_registered_by();
  stored = old;
  ASSERT_TRUE(stored.MergeFromString(session.SerializeAsString()));
  ASSERT_TRUE(store_->Put(Table::kWorkers, "w0", stored).ok());
  Reopen();
  EXPECT_TRUE(Heartbeat("w1", session.session_id(), false, 0).ok());
  EXPECT_EQ(registry_->List()[1].SerializeAsString().find(session.session_id()), std::string::npos);
  // The unbound one registers again, which binds its name.
  const absl::Status unbound = Heartbeat("w0", session.session_id(), false, 0);
  EXPECT_EQ(unbound.code(), absl::StatusCode::kFailedPrecondition) << unbound;
  EXPECT_THAT(unbound.message(), HasSubstr("register again"));
  auto again = Register("w0", Caps(2), "p");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(Heartbeat("w0", *again, false, 0).ok());
  EXPECT_EQ(Heartbeat("w0", *again, false, 0, kTokenB).code(), absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace farm::coordinator
