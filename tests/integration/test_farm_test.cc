// The farm fixture itself (tests/support/test_farm.h, suite_fixture.h): the farm it starts,
// its tokens, restarts and teardown; and a suite whose shared set-up fails has its tests fail,
// not skipped.
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

nlohmann::json Listed(const TestFarm& farm, const std::string& name) {
  for (const auto& w : farm.ListWorkers()) {
    if (w.value("name", "") == name) return w;
  }
  return nlohmann::json::object();
}

TEST(TestFarmTest, StartsTheWorkersAsAskedAndLaysOutItsDirectory) {
  TempDir dir("test-farm-layout");
  auto farm = TestFarm::Start(
      dir.path(), {.coordinator_args = {"--worker-timeout", "2s"},
                   .workers = {{.name = "a", .args = {"--cuda-path", "none"}, .slots = 3},
                               {.name = "b", .args = {"--cuda-path", "none"}}}});
  ASSERT_TRUE(farm.ok()) << farm.status();
  TestFarm& f = **farm;
  EXPECT_EQ(f.WorkerState("a"), "online");
  EXPECT_EQ(f.WorkerState("b"), "online");
  EXPECT_EQ(Listed(f, "a").value("slots", 0), 3);
  EXPECT_EQ(Listed(f, "b").value("slots", 0), 1);
  EXPECT_EQ(f.WorkerNames(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(fs::is_directory(dir.path() / "data"));
  EXPECT_EQ(f.coordinator().log_path(), dir / "data.log");
  EXPECT_EQ(f.worker("a").log_path(), dir / "a.log");
  EXPECT_EQ(f.WorkerDir("a"), dir / "a");
  EXPECT_TRUE(fs::is_directory(dir.path() / "a"));
  EXPECT_EQ(f.AdminToken().size(), 64u);
  EXPECT_THAT(f.ClientEnvironment(),
              ::testing::ElementsAre("FARM_COORDINATOR=" + f.address(),
                                     "FARM_TOKEN_FILE=" + f.admin_token_file()));
  EXPECT_THROW(f.worker("nobody"), std::out_of_range);
}

TEST(TestFarmTest, MakesTokensThroughFarmctl) {
  TempDir dir("test-farm-tokens");
  auto farm = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(farm.ok()) << farm.status();
  auto made = (*farm)->CreateToken("read", "viewer");
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->file, dir / "viewer.token");
  EXPECT_FALSE(made->id.empty());
  CommandResult status = (*farm)->Farmctl({"status"}, {}, absl::Seconds(60), made->file);
  EXPECT_EQ(status.exit_code, 0) << Output(status);
  CommandResult listed = (*farm)->Farmctl({"token", "list"});
  EXPECT_THAT(listed.stdout_text, HasSubstr(made->id)) << Output(listed);
  // A name taken by a token file already: refused, with farmctl's words.
  auto again = (*farm)->CreateToken("read", "viewer");
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("exists"));
}

TEST(TestFarmTest, RestartsTheCoordinatorOnItsPortsAndWorkersOneByOne) {
  TempDir dir("test-farm-restarts");
  auto farm = TestFarm::Start(
      dir.path(), {.coordinator_args = {"--worker-timeout", "2s"}, .workers = NumberedWorkers(2)});
  ASSERT_TRUE(farm.ok()) << farm.status();
  TestFarm& f = **farm;
  const std::string grpc = f.address(), http = f.coordinator().http_address();
  const pid_t first = f.coordinator().process().pid();
  absl::Status restarted = f.RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;
  EXPECT_NE(f.coordinator().process().pid(), first);
  EXPECT_EQ(f.address(), grpc);
  EXPECT_EQ(f.coordinator().http_address(), http);
  absl::Status online = f.WaitUntilOnline({"w1", "w2"});
  EXPECT_TRUE(online.ok()) << online;

  f.KillWorker("w1");
  EXPECT_TRUE(WaitFor([&] { return f.WorkerState("w1") == "lost"; }, absl::Seconds(20)));
  absl::Status back = f.RestartWorker("w1");
  ASSERT_TRUE(back.ok()) << back;
  online = f.WaitUntilOnline({"w1"});
  EXPECT_TRUE(online.ok()) << online;
  EXPECT_EQ(f.StopWorker("w2"), 0);
  EXPECT_TRUE(WaitFor([&] { return f.WorkerState("w2") == "offline"; }, absl::Seconds(10)));
}

TEST(TestFarmTest, AWorkerThatCannotComeOnlineFailsTheStartWithItsLog) {
  TempDir dir("test-farm-refused");
  WriteText(dir / "wrong.token", "ffffffffffffffffffffffffffffffff\n");
  const absl::Time start = absl::Now();
  auto farm = TestFarm::Start(
      dir.path(),
      {.workers = {{.name = "good"}, {.name = "bad", .token_file = dir / "wrong.token"}},
       .online_timeout = absl::Seconds(60)});
  ASSERT_FALSE(farm.ok());
  // It exited: the wait ends then, not at the timeout.
  EXPECT_LT(absl::Now() - start, absl::Seconds(45));
  const std::string why(farm.status().message());
  EXPECT_THAT(why, HasSubstr("bad (not listed)"));
  EXPECT_THAT(why, HasSubstr("bad exited with "));
  EXPECT_THAT(why, HasSubstr("--- bad's log, " + (dir / "bad.log")));
  EXPECT_THAT(why, HasSubstr("token does not match"));
  EXPECT_THAT(why, HasSubstr("the coordinator's log"));
}

TEST(TestFarmTest, StopsEveryProcessItStartedOrAdopted) {
  TempDir dir("test-farm-teardown");
  std::vector<pid_t> pids;
  {
    auto farm = TestFarm::Start(dir.path(), 1);
    ASSERT_TRUE(farm.ok()) << farm.status();
    auto extra = (*farm)->StartWorker({.name = "extra"});
    ASSERT_TRUE(extra.ok()) << extra.status();
    auto adopted = WorkerProcess::Spawn({"sleep", "300"}, dir / "sleeper.log");
    ASSERT_TRUE(adopted.ok()) << adopted.status();
    WorkerProcess* sleeper = (*farm)->Adopt("sleeper", *std::move(adopted));
    EXPECT_FALSE((*farm)->RestartWorker("sleeper").ok());
    pids = {(*farm)->coordinator().process().pid(), (*farm)->worker("w1").process().pid(),
            (**extra).process().pid(), sleeper->process().pid()};
  }
  for (pid_t pid : pids) EXPECT_FALSE(ProcessStartTime(pid).ok()) << pid << " still runs";
}

// A suite whose shared set-up fails when FARM_TEST_FAIL_SUITE_SET_UP is set: run so by the
// test below, its tests fail with the set-up's failure (gtest alone would skip them).
class SuiteWithASharedSetUp : public SuiteFixture<SuiteWithASharedSetUp> {
 protected:
  static void SetUpSuite() {
    ASSERT_EQ(std::getenv("FARM_TEST_FAIL_SUITE_SET_UP"), nullptr) << "the set-up was told to fail";
    set_up_ran_ = true;
  }
  static void TearDownSuite() { set_up_ran_ = false; }
  static inline bool set_up_ran_ = false;
};

TEST_F(SuiteWithASharedSetUp, RunsAfterTheSetUp) { EXPECT_TRUE(set_up_ran_); }
TEST_F(SuiteWithASharedSetUp, RunsAfterTheSetUpToo) { EXPECT_TRUE(set_up_ran_); }

TEST(SuiteFixtureTest, ASuiteWhoseSetUpFailsHasEachTestFailWithTheCause) {
  auto r = RunCommand(
      {fs::read_symlink("/proc/self/exe").string(), "--gtest_filter=SuiteWithASharedSetUp.*"},
      absl::Seconds(60), {"FARM_TEST_FAIL_SUITE_SET_UP=1"});
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string out = r->stdout_text + r->stderr_text;
  EXPECT_NE(r->exit_code, 0) << out;
  EXPECT_THAT(out, HasSubstr("[  FAILED  ] SuiteWithASharedSetUp.RunsAfterTheSetUp "));
  EXPECT_THAT(out, HasSubstr("[  FAILED  ] SuiteWithASharedSetUp.RunsAfterTheSetUpToo "));
  EXPECT_THAT(out, HasSubstr("the suite's shared set-up (SetUpSuite) failed"));
  EXPECT_THAT(out, HasSubstr("the set-up was told to fail"));
  EXPECT_THAT(out, Not(HasSubstr("[  SKIPPED ]"))) << out;
}

TEST(SuiteFixtureTest, CaptureFailuresKeepsAssertionsAndExceptionsFromGtest) {
  EXPECT_EQ(CaptureFailures([] {}), "");
  const std::string failures = CaptureFailures([] {
    EXPECT_EQ(1, 2) << "first";
    ASSERT_TRUE(false) << "second";
  });
  EXPECT_THAT(failures, HasSubstr("first"));
  EXPECT_THAT(failures, HasSubstr("second"));
  EXPECT_THAT(failures, HasSubstr("test_farm_test.cc:"));
  EXPECT_THAT(CaptureFailures([] { throw std::runtime_error("thrown in the set-up"); }),
              HasSubstr("thrown in the set-up"));
}

}  // namespace
}  // namespace farm::testing
