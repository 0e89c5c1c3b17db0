#include "worker/command_runner.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libfarm/process/process_table.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

class CommandRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("command_runner_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "root");
  }
  void TearDown() override { fs::remove_all(dir_); }
  CommandSpec Spec(std::vector<std::string> argv) {
    CommandSpec spec;
    spec.argv = std::move(argv);
    spec.env = {{"PATH", "/usr/bin:/bin"}, {"GREETING", "hello"}};
    spec.cwd = (dir_ / "root").string();
    spec.stdout_path = (dir_ / "stdout").string();
    spec.stderr_path = (dir_ / "stderr").string();
    return spec;
  }
  std::string Read(const std::string& name) {
    std::stringstream s;
    s << std::ifstream(dir_ / name).rdbuf();
    return s.str();
  }
  fs::path dir_;
  std::atomic<bool> cancel_{false};
};

TEST_F(CommandRunnerTest, RunsInItsDirectoryWithOnlyItsEnvironment) {
  auto r = RunCommandInDirectory(
      Spec({"sh", "-c", "pwd; echo $GREETING; echo ${HOME:-nohome}; echo oops >&2; exit 4"}),
      cancel_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_EQ(Read("stdout"), (dir_ / "root").string() + "\nhello\nnohome\n");
  EXPECT_EQ(Read("stderr"), "oops\n");
  EXPECT_GT(r->peak_rss_bytes, 0u);
  EXPECT_FALSE(r->timed_out);
}

TEST_F(CommandRunnerTest, TimeoutKillsTheWholeProcessGroup) {
  auto spec = Spec({"sh", "-c", "sleep 30 & sleep 30; echo never"});
  spec.timeout = absl::Milliseconds(300);
  auto r = RunCommandInDirectory(spec, cancel_);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, 128 + 9);
  EXPECT_LT(r->wall_seconds, 5);
  EXPECT_EQ(Read("stdout"), "");
}

// The worker's disk watch: a reason from it stops the command and is kept.
TEST_F(CommandRunnerTest, AWatchThatObjectsStopsIt) {
  auto spec = Spec({"sh", "-c", "sleep 30 & sleep 30; echo never"});
  std::atomic<int> asked{0};
  spec.watch = [&]() -> std::optional<std::string> {
    if (++asked < 3) return std::nullopt;
    return "it wrote too much";
  };
  spec.watch_period = absl::Milliseconds(50);
  auto r = RunCommandInDirectory(spec, cancel_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->killed_for, "it wrote too much");
  EXPECT_EQ(asked.load(), 3);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 128 + 9);
  EXPECT_LT(r->wall_seconds, 5);
}

TEST_F(CommandRunnerTest, CancelStopsIt) {
  cancel_ = true;
  auto r = RunCommandInDirectory(Spec({"sleep", "30"}), cancel_);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
}

TEST_F(CommandRunnerTest, MissingProgramIsNotFound) {
  auto r = RunCommandInDirectory(Spec({"no-such-program-anywhere"}), cancel_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

bool GoneWithin(const std::string& marker, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (AnyProcessCommandLineContains(marker)) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return true;
}

class SandboxedCommandTest : public CommandRunnerTest {
 protected:
  CommandSpec Sandboxed(std::vector<std::string> argv) {
    CommandSpec spec = Spec(std::move(argv));
    spec.sandbox = &sandbox_;
    spec.mounts.writable = {spec.cwd};
    return spec;
  }
  // A shell command leaving a grandchild in its own session (out of the process group), whose
  // command line carries a marker unique to this test.
  std::string Escapee() {
    marker_ = absl::StrCat("wheelfarm-escapee-", ::getpid(), "-", ++counter_);
    return absl::StrCat("setsid sh -c 'sleep 300; echo ", marker_, "' & ");
  }
  Sandbox sandbox_{SandboxOptions{}};
  std::string marker_;
  int counter_ = 0;
};

TEST_F(SandboxedCommandTest, RunsUnprivilegedAndWritesOnlyItsDirectory) {
  // Beside its directory: /tmp is the command's own, so this lands in its private tmpfs.
  const std::string outside = (dir_ / "escaped").string();
  auto r = RunCommandInDirectory(
      Sandboxed({"sh", "-c",
                 absl::StrCat("id -u; id -g; echo $GREETING; pwd; echo in > inside.txt; ",
                              "echo x > ", outside, "; echo x > /usr/escaped || echo refused; ",
                              "echo x > /var/escaped || echo refused; touch /tmp/t && echo tmp")}),
      cancel_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << Read("stderr");
  EXPECT_EQ(Read("stdout"), absl::StrCat("65534\n65534\nhello\n", (dir_ / "root").string(),
                                         "\nrefused\nrefused\ntmp\n"));
  EXPECT_FALSE(fs::exists(outside));
  EXPECT_FALSE(fs::exists("/usr/escaped"));
  EXPECT_FALSE(fs::exists("/var/escaped"));
  // What it wrote belongs to the worker outside: readable and removable.
  EXPECT_EQ(Read("root/inside.txt"), "in\n");
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "root" / "inside.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::getuid());
}

TEST_F(SandboxedCommandTest, SetsidGrandchildDiesWhenTheCommandExits) {
  auto r =
      RunCommandInDirectory(Sandboxed({"sh", "-c", Escapee() + "sleep 0.5; echo done"}), cancel_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Read("stdout"), "done\n");
  EXPECT_TRUE(GoneWithin(marker_, absl::Seconds(5)));
}

TEST_F(SandboxedCommandTest, SetsidGrandchildDiesOnTimeout) {
  auto spec = Sandboxed({"sh", "-c", Escapee() + "sleep 30"});
  spec.timeout = absl::Seconds(1);
  auto r = RunCommandInDirectory(spec, cancel_);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, 128 + 9);
  EXPECT_TRUE(GoneWithin(marker_, absl::Seconds(5)));
}

TEST_F(SandboxedCommandTest, SetsidGrandchildDiesOnCancel) {
  std::thread canceller([this] {
    absl::SleepFor(absl::Milliseconds(800));
    cancel_ = true;
  });
  auto r = RunCommandInDirectory(Sandboxed({"sh", "-c", Escapee() + "sleep 30"}), cancel_);
  canceller.join();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
  EXPECT_TRUE(GoneWithin(marker_, absl::Seconds(5)));
}

TEST_F(SandboxedCommandTest, MissingProgramIsNotFound) {
  auto r = RunCommandInDirectory(Sandboxed({"no-such-program-anywhere"}), cancel_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace farm::worker
