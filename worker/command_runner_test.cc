#include "worker/command_runner.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace farm::worker
