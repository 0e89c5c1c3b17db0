// farmctl up / down: a local farm in the background, found by clients without flags, and
// stopped process by process.
#include <signal.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/process/subprocess.h"
#include "tests/support/farm_processes.h"

namespace farm::testing {
namespace {

using ::testing::HasSubstr;

TEST(LocalFarmTest, UpFindDownAndUpAgain) {
  TempDir dir("localfarm");
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + (dir / "state"),
                                        "FARM_COORDINATOR=", "FARM_TOKEN_FILE="};
  const std::vector<std::string> up = {"up",          "--workers",     "2",
                                       "--data-dir",  dir / "farm",    "--listen",
                                       "127.0.0.1:0", "--http-listen", "127.0.0.1:0"};
  CommandResult r = RunFarmctl(up, env);
  ASSERT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  EXPECT_THAT(r.stdout_text, HasSubstr("local farm up"));
  EXPECT_THAT(r.stdout_text, HasSubstr("farmctl down"));

  // Clients find the farm and its token with no flags.
  CommandResult workers = RunFarmctl({"--json", "workers"}, env);
  ASSERT_EQ(workers.exit_code, 0) << workers.stderr_text;
  auto list = nlohmann::json::parse(workers.stdout_text);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(StateOf(list, "local-1"), "online");
  EXPECT_EQ(StateOf(list, "local-2"), "online");

  // Up again is a no-op that says so.
  CommandResult again = RunFarmctl(up, env);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_THAT(again.stdout_text, HasSubstr("already running"));

  auto record = nlohmann::json::parse(ReadFile(dir / "farm/farm.json"));
  std::vector<int> pids;
  for (const auto& p : record["processes"]) pids.push_back(p["pid"]);
  ASSERT_EQ(pids.size(), 3u);

  CommandResult down = RunFarmctl({"down"}, env);
  ASSERT_EQ(down.exit_code, 0) << down.stderr_text;
  EXPECT_THAT(down.stdout_text, HasSubstr("stopped 3 process(es)"));
  for (int pid : pids) EXPECT_FALSE(ProcessStartTime(pid).ok()) << pid;

  CommandResult down_again = RunFarmctl({"down"}, env);
  EXPECT_EQ(down_again.exit_code, 0);
  EXPECT_THAT(down_again.stdout_text, HasSubstr("no local farm is running"));

  // Clients now say there is no farm and how to start one.
  CommandResult status = RunFarmctl({"status"}, env);
  EXPECT_NE(status.exit_code, 0);
  EXPECT_THAT(status.stderr_text, HasSubstr("farmctl up"));

  // State stays: the next up shows the same workers (now offline until they register).
  CommandResult up2 = RunFarmctl(up, env);
  ASSERT_EQ(up2.exit_code, 0) << up2.stderr_text;
  list = nlohmann::json::parse(RunFarmctl({"--json", "workers"}, env).stdout_text);
  EXPECT_EQ(list.size(), 2u);
  EXPECT_EQ(RunFarmctl({"down"}, env).exit_code, 0);
}

TEST(LocalFarmTest, DownLeavesForeignProcessesAlone) {
  TempDir dir("foreign");
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + (dir / "state")};
  auto sleeper = Subprocess::Spawn({"sleep", "60"});
  ASSERT_TRUE(sleeper.ok());
  // A record whose pid now belongs to another process (start time differs).
  std::filesystem::create_directories(dir / "farm");
  nlohmann::json record = {
      {"data_dir", dir / "farm"},
      {"grpc", "127.0.0.1:1"},
      {"processes",
       {{{"role", "coordinator"}, {"name", "c"}, {"pid", sleeper->pid()}, {"start_time", 1}}}}};
  std::ofstream(dir / "farm/farm.json") << record.dump();
  CommandResult down = RunFarmctl({"down", "--data-dir", dir / "farm"}, env);
  EXPECT_EQ(down.exit_code, 0);
  EXPECT_THAT(down.stdout_text, HasSubstr("stopped 0 process(es)"));
  EXPECT_FALSE(sleeper->Wait(absl::Milliseconds(200)).has_value());
  sleeper->Signal(SIGKILL);
  sleeper->Wait(absl::Seconds(5));
}

}  // namespace
}  // namespace farm::testing
