// farmctl up / down: a local farm in the background, found by clients without flags, and
// stopped process by process; a second local farm never takes the first one's clients.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

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

TEST(LocalFarmTest, ASecondFarmNeverRedirectsTheFirstOnesClients) {
  TempDir dir("twofarms");
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + (dir / "state"),
                                        "FARM_COORDINATOR=", "FARM_TOKEN_FILE=", "FARM_DIR="};
  auto up = [&](const std::string& data_dir) {
    return RunFarmctl({"--json", "up", "--workers", "1", "--data-dir", data_dir, "--listen",
                       "127.0.0.1:0", "--http-listen", "127.0.0.1:0"},
                      env);
  };
  auto grpc_of = [&](const std::vector<std::string>& args) {
    CommandResult r = RunFarmctl(args, env);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    auto j = nlohmann::json::parse(r.stdout_text, nullptr, false);
    return j.is_object() ? j.value("grpc_address", "") + " " + j.value("chosen_by", "")
                         : std::string("unparsable: ") + r.stdout_text;
  };
  const std::string first = dir / "first", second = dir / "second";
  CommandResult a = up(first);
  ASSERT_EQ(a.exit_code, 0) << a.stderr_text;
  const auto a_json = nlohmann::json::parse(a.stdout_text);
  EXPECT_TRUE(a_json["current"].get<bool>());

  CommandResult b = up(second);
  ASSERT_EQ(b.exit_code, 0) << b.stderr_text;
  const auto b_json = nlohmann::json::parse(b.stdout_text);
  EXPECT_FALSE(b_json["current"].get<bool>()) << "the second farm took the first one's clients";
  EXPECT_EQ(ReadFile(dir / "state/wheelfarm/current"), first + "\n");
  // The text form says where bare calls go and how to reach the new farm.
  CommandResult b_again = RunFarmctl({"up", "--data-dir", second, "--listen", "127.0.0.1:0"}, env);
  EXPECT_THAT(b_again.stdout_text, HasSubstr("The current local farm stays " + first));
  EXPECT_THAT(b_again.stdout_text, HasSubstr("--farm-dir " + second));

  // Bare calls go to the first farm and say so; --farm-dir (or FARM_DIR) picks the second.
  const std::string a_grpc = a_json["grpc"], b_grpc = b_json["grpc"];
  ASSERT_NE(a_grpc, b_grpc);
  EXPECT_EQ(grpc_of({"--json", "status"}), a_grpc + " local farm " + first + " (current)");
  EXPECT_EQ(grpc_of({"--json", "--farm-dir", second, "status"}),
            b_grpc + " local farm " + second + " (--farm-dir)");
  CommandResult text = RunFarmctl({"status"}, env);
  EXPECT_THAT(text.stdout_text, HasSubstr("farm         local farm " + first + " (current)"));

  // Stopping the second leaves the first one current.
  ASSERT_EQ(RunFarmctl({"down", "--data-dir", second}, env).exit_code, 0);
  EXPECT_EQ(grpc_of({"--json", "status"}), a_grpc + " local farm " + first + " (current)");
  CommandResult gone = RunFarmctl({"--farm-dir", second, "status"}, env);
  EXPECT_EQ(gone.exit_code, 2) << gone.stderr_text;
  EXPECT_THAT(gone.stderr_text, HasSubstr("no local farm is running there"));
  EXPECT_THAT(gone.stderr_text, HasSubstr("Fix:"));

  // With the first one down, the next farm started becomes current.
  ASSERT_EQ(RunFarmctl({"down"}, env).exit_code, 0);
  CommandResult b2 = up(second);
  ASSERT_EQ(b2.exit_code, 0) << b2.stderr_text;
  EXPECT_TRUE(nlohmann::json::parse(b2.stdout_text)["current"].get<bool>());
  EXPECT_EQ(RunFarmctl({"down"}, env).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir / "state/wheelfarm/current"));
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

// A second `farmctl up` with the default ports while something holds them (another local farm,
// or this test when nothing does) starts on free ports and says so; an explicit --listen
// stays strict.
TEST(LocalFarmTest, UpWithDefaultPortsTakenStartsOnFreePorts) {
  TempDir dir("defaults-taken");
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + (dir / "state"),
                                        "FARM_COORDINATOR=", "FARM_TOKEN_FILE="};
  std::vector<int> held;
  for (int port : {7420, 7421}) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    // When this fails, something else holds the port: taken either way.
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && ::listen(fd, 1) == 0) {
      held.push_back(fd);
    } else {
      ::close(fd);
    }
  }
  CommandResult up =
      RunFarmctl({"--json", "up", "--workers", "1", "--data-dir", dir / "farm"}, env);
  ASSERT_EQ(up.exit_code, 0) << Output(up);
  auto started = nlohmann::json::parse(up.stdout_text);
  EXPECT_NE(started["grpc"].get<std::string>(), "127.0.0.1:7420") << up.stdout_text;
  EXPECT_NE(started["http"].get<std::string>(), "127.0.0.1:7421") << up.stdout_text;
  EXPECT_THAT(up.stderr_text, HasSubstr("127.0.0.1:7420 is in use")) << Output(up);
  EXPECT_THAT(up.stderr_text, HasSubstr("127.0.0.1:7421 is in use")) << Output(up);
  CommandResult workers = RunFarmctl({"--farm-dir", dir / "farm", "--json", "workers"}, env);
  ASSERT_EQ(workers.exit_code, 0) << Output(workers);
  EXPECT_EQ(nlohmann::json::parse(workers.stdout_text).size(), 1u) << workers.stdout_text;
  EXPECT_EQ(RunFarmctl({"down", "--data-dir", dir / "farm"}, env).exit_code, 0);

  CommandResult strict = RunFarmctl(
      {"up", "--workers", "0", "--data-dir", dir / "strict", "--listen", "127.0.0.1:7420"}, env);
  EXPECT_NE(strict.exit_code, 0) << Output(strict);
  RunFarmctl({"down", "--data-dir", dir / "strict"}, env);
  for (int fd : held) ::close(fd);
}

}  // namespace
}  // namespace farm::testing
