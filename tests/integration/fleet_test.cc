// A coordinator and two workers as real processes on loopback: registration, capability
// reporting, kill -9 of the coordinator, and workers going lost or offline.
#include <signal.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

using ::testing::ElementsAre;

constexpr char kTimeout[] = "2s";

class FleetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto farm = TestFarm::Start(dir_.path(), {.coordinator_args = {"--worker-timeout", kTimeout},
                                              .workers = NumberedWorkers(2)});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }
  nlohmann::json Workers() { return farm_->ListWorkers(); }

  TempDir dir_{"fleet"};
  std::unique_ptr<TestFarm> farm_;
};

TEST_F(FleetTest, WorkersAdvertiseCudaToolkitAndPlatform) {
  nlohmann::json workers = Workers();
  ASSERT_EQ(workers.size(), 2u);
  for (const auto& w : workers) {
    EXPECT_EQ(w["state"], "online");
    EXPECT_TRUE(w["cpu_arch"] == "x86_64" || w["cpu_arch"] == "aarch64");
    EXPECT_THAT(w["glibc"].get<std::string>(), ::testing::StartsWith("2."));
    EXPECT_EQ(w["slots"], 1);
    ASSERT_EQ(w["cuda"].size(), 1u) << w.dump(2);
    EXPECT_EQ(w["cuda"][0]["version"], "13.0");
    const auto sms = w["cuda"][0]["sms"].get<std::vector<std::string>>();
    EXPECT_EQ(sms.front(), "sm_75");
    EXPECT_THAT(sms, ::testing::Contains("sm_90"));
    EXPECT_THAT(sms, ::testing::Contains("sm_121"));
  }
}

TEST_F(FleetTest, Kill9CoordinatorRestartKeepsRegistryAndWorkersReconnect) {
  farm_->coordinator().process().Signal(SIGKILL);
  ASSERT_EQ(farm_->coordinator().process().Wait(absl::Seconds(5)), 128 + SIGKILL);

  absl::Status restarted = farm_->RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;
  // The registry came back from RocksDB before any worker spoke to the new process.
  nlohmann::json workers = Workers();
  ASSERT_EQ(workers.size(), 2u);
  EXPECT_EQ(workers[0]["name"], "w1");
  EXPECT_EQ(workers[0]["cuda"][0]["version"], "13.0");

  // Workers reconnect on their own (after their backoff, which a loaded host stretches) and
  // stay online three timeouts later, which takes heartbeats accepted by the new process.
  absl::Status online = farm_->WaitUntilOnline({"w1", "w2"}, absl::Seconds(30));
  ASSERT_TRUE(online.ok()) << online;
  std::this_thread::sleep_for(std::chrono::seconds(6));
  workers = Workers();
  EXPECT_EQ(StateOf(workers, "w1"), "online") << ReadFile(farm_->worker("w1").log_path());
  EXPECT_EQ(StateOf(workers, "w2"), "online") << ReadFile(farm_->worker("w2").log_path());
}

TEST_F(FleetTest, KilledWorkerShowsLostAndStoppedWorkerShowsOffline) {
  farm_->worker("w1").process().Signal(SIGKILL);
  EXPECT_EQ(farm_->StopWorker("w2", absl::Seconds(10)), 0);
  EXPECT_TRUE(WaitFor([&] { return StateOf(Workers(), "w2") == "offline"; }, absl::Seconds(5)));
  // Lost within the 2 s timeout plus one sweep.
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(WaitFor([&] { return StateOf(Workers(), "w1") == "lost"; }, absl::Seconds(10)));
  EXPECT_LT(absl::Now() - killed, absl::Seconds(4));

  // A lost worker that comes back is online again.
  absl::Status back = farm_->RestartWorker("w1");
  ASSERT_TRUE(back.ok()) << back;
  absl::Status online = farm_->WaitUntilOnline({"w1"}, absl::Seconds(20));
  EXPECT_TRUE(online.ok()) << online;
}

TEST_F(FleetTest, ATakenNameOrWorkDirIsRefusedWithExit2AndTheHolderKeepsItsSession) {
  const nlohmann::json before = Workers();
  WorkerProcess& w1 = farm_->worker("w1");
  // Another host (another work dir) started with the live w1's name.
  auto started = farm_->StartWorker({.name = "w1", .dir = dir_ / "other-host"});
  ASSERT_TRUE(started.ok()) << started.status();
  WorkerProcess& impostor = **started;
  EXPECT_EQ(impostor.process().Wait(absl::Seconds(30)), 2) << ReadFile(impostor.log_path());
  EXPECT_THAT(ReadFile(impostor.log_path()),
              ::testing::HasSubstr("worker name 'w1' is taken by a live worker"));
  EXPECT_THAT(ReadFile(impostor.log_path()), ::testing::HasSubstr("Fix: stop that worker"));
  // A second process on w2's own work dir never gets as far as the coordinator.
  started = farm_->StartWorker({.name = "w2"});
  ASSERT_TRUE(started.ok()) << started.status();
  WorkerProcess& twin = **started;
  EXPECT_EQ(twin.process().Wait(absl::Seconds(30)), 2);
  EXPECT_THAT(ReadFile(twin.log_path()), ::testing::HasSubstr("in use by another farm-worker"));

  // No takeover: both keep the sessions they had, no session ended.
  const nlohmann::json after = Workers();
  ASSERT_EQ(after.size(), 2u);
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].value("state", ""), "online") << after.dump(2);
    EXPECT_EQ(after[i].value("registered_at", ""), before[i].value("registered_at", ""));
    EXPECT_EQ(after[i].value("peer", ""), before[i].value("peer", ""));
  }
  EXPECT_THAT(ReadFile(w1.log_path()), ::testing::Not(::testing::HasSubstr("register again")));

  // w1 itself, restarted after kill -9 from its own work dir, takes its name back.
  w1.Stop();
  started = farm_->StartWorker({.name = "w1"});
  ASSERT_TRUE(started.ok()) << started.status();
  WorkerProcess& back = **started;
  EXPECT_TRUE(WaitFor(
      [&] {
        return StateOf(Workers(), "w1") == "online" &&
               ReadFile(back.log_path()).find("registered with") != std::string::npos;
      },
      absl::Seconds(20)))
      << ReadFile(back.log_path());
}

TEST_F(FleetTest, StatusSummarizesTheFleet) {
  CommandResult r = farm_->Farmctl({"--json", "status"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  auto j = nlohmann::json::parse(r.stdout_text);
  EXPECT_EQ(j["workers"]["online"], 2);
  EXPECT_EQ(j["slots_online"], 2);
  EXPECT_EQ(j["grpc_address"], farm_->address());
  EXPECT_EQ(j["worker_timeout_ms"], 2000);
}

}  // namespace
}  // namespace farm::testing
