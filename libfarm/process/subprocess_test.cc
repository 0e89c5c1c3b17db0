#include "libfarm/process/subprocess.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(SubprocessTest, RunCommandCapturesOutputAndExitCode) {
  auto r = RunCommand({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->stdout_text, "out\n");
  EXPECT_EQ(r->stderr_text, "err\n");
}

// A fork child that has not exec'd is the copy RunCommand replaces; one that exec'd is not.
TEST(SubprocessTest, StuckBeforeExecTellsAForkCopyFromAnExecdChild) {
  const pid_t copy = fork();
  ASSERT_GE(copy, 0);
  if (copy == 0) {
    pause();  // a fork that never reaches exec
    _exit(0);
  }
  EXPECT_TRUE(StuckBeforeExec(copy));
  kill(copy, SIGKILL);
  waitpid(copy, nullptr, 0);
  EXPECT_FALSE(StuckBeforeExec(copy)) << "a reaped child is no copy of anything";

  auto sleeper = Subprocess::Spawn({"sleep", "30"});
  ASSERT_TRUE(sleeper.ok()) << sleeper.status();
  EXPECT_FALSE(StuckBeforeExec(sleeper->pid()));
  sleeper->Signal(SIGKILL);
  sleeper->Wait(absl::Seconds(5));
}

TEST(SubprocessTest, RunCommandTimesOut) {
  auto r = RunCommand({"sleep", "30"}, absl::Milliseconds(200));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("printed nothing"));
}

TEST(SubprocessTest, ATimeoutSaysWhatTheCommandPrintedLast) {
  auto r = RunCommand({"sh", "-c", "echo step 1; echo step 2 >&2; exec sleep 30"},
                      absl::Milliseconds(500));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("step 1"));
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("step 2"));
}

TEST(SubprocessTest, RunCommandReportsMissingProgram) {
  auto r = RunCommand({"/nonexistent/program"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

TEST(SubprocessTest, SpawnLogsAndIsSignalled) {
  const auto log = std::filesystem::temp_directory_path() /
                   ("subprocess_test_" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(log);
  auto p = Subprocess::Spawn({"sh", "-c", "echo started; exec sleep 30"},
                             {.log_path = log.string(), .new_session = true});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->Wait(absl::Milliseconds(300)).has_value());
  p->Signal(SIGTERM);
  auto code = p->Wait(absl::Seconds(5));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 128 + SIGTERM);
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  EXPECT_EQ(text.str(), "started\n");
}

TEST(SubprocessTest, SpawnPassesExtraEnvironment) {
  const auto log = std::filesystem::temp_directory_path() /
                   ("subprocess_env_" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(log);
  auto p = Subprocess::Spawn({"sh", "-c", "echo $FARM_TEST_VALUE"},
                             {.log_path = log.string(), .extra_env = {"FARM_TEST_VALUE=42"}});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->Wait(absl::Seconds(5)), 0);
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  EXPECT_EQ(text.str(), "42\n");
}

}  // namespace
}  // namespace farm

namespace farm {
namespace {

TEST(ProcessStartTimeTest, KnowsLiveProcessesOnly) {
  auto self = ProcessStartTime(::getpid());
  ASSERT_TRUE(self.ok()) << self.status();
  EXPECT_GT(*self, 0u);
  EXPECT_EQ(*ProcessStartTime(::getpid()), *self);
  auto child = Subprocess::Spawn({"true"});
  ASSERT_TRUE(child.ok());
  ASSERT_EQ(child->Wait(absl::Seconds(5)), 0);
  EXPECT_EQ(ProcessStartTime(child->pid()).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace farm
