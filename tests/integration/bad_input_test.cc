// Bad input to real processes: wrong tokens, garbage on the port, damaged or locked data
// dirs, bad flags. Each gets a clear message and exit code; nothing crashes or resets.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/status/exit_code.h"
#include "tests/support/farm_processes.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RunningCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = CoordinatorProcess::Start(dir_ / "data");
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = *c;
    std::ofstream(dir_ / "wrong-token") << "ffffffffffffffffffffffffffffffff\n";
  }
  void TearDown() override { coordinator_->Stop(); }
  CommandResult Farmctl(const std::vector<std::string>& args, const std::string& token_file) {
    std::vector<std::string> all = {"--coordinator", coordinator_->grpc_address()};
    if (!token_file.empty()) {
      all.push_back("--token-file");
      all.push_back(token_file);
    }
    all.insert(all.end(), args.begin(), args.end());
    // An isolated state home, so no local farm's token is picked up.
    return RunFarmctl(all, {"XDG_STATE_HOME=" + (dir_ / "state"), "FARM_TOKEN_FILE="});
  }
  bool StillServing() { return Farmctl({"status"}, coordinator_->token_file()).exit_code == 0; }

  TempDir dir_{"badinput"};
  std::optional<CoordinatorProcess> coordinator_;
};

TEST_F(RunningCoordinatorTest, WrongTokenIsUnauthenticated) {
  CommandResult r = Farmctl({"workers"}, dir_ / "wrong-token");
  EXPECT_EQ(r.exit_code, kExitUnauthenticated);
  EXPECT_THAT(r.stderr_text, HasSubstr("token does not match"));
  EXPECT_TRUE(StillServing());
}

TEST_F(RunningCoordinatorTest, MissingTokenIsRefusedBeforeCalling) {
  CommandResult r = Farmctl({"workers"}, "");
  EXPECT_EQ(r.exit_code, kExitConfig);
  EXPECT_THAT(r.stderr_text, HasSubstr("--token-file"));
  CommandResult missing = Farmctl({"workers"}, dir_ / "no-such-file");
  EXPECT_EQ(missing.exit_code, kExitConfig);
  EXPECT_THAT(missing.stderr_text, HasSubstr("no-such-file"));
}

TEST_F(RunningCoordinatorTest, WorkerWithWrongTokenExitsAndRegistersNothing) {
  auto w = WorkerProcess::Start(coordinator_->grpc_address(), dir_ / "wrong-token", "intruder",
                                dir_.path().string());
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->process().Wait(absl::Seconds(30)), kExitUnauthenticated);
  EXPECT_THAT(ReadFile(w->log_path()), HasSubstr("token does not match"));
  EXPECT_TRUE(ListWorkersJson(coordinator_->grpc_address(), coordinator_->token_file()).empty());
}

TEST_F(RunningCoordinatorTest, GarbageOnTheGrpcPortDoesNotHurt) {
  for (const std::string& payload :
       {std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), std::string(4096, '\xff'),
        std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string(100, '\x00')}) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(coordinator_->port()));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_GT(send(fd, payload.data(), payload.size(), MSG_NOSIGNAL), 0);
    close(fd);
  }
  EXPECT_FALSE(coordinator_->process().Wait(absl::Milliseconds(200)).has_value());
  EXPECT_TRUE(StillServing());
}

TEST_F(RunningCoordinatorTest, SecondCoordinatorOnSameDataDirIsRefused) {
  auto second = Subprocess::Spawn({FarmBinary("farm-coordinator"), "--data-dir", dir_ / "data",
                                   "--listen", "127.0.0.1:0", "--http-listen", ""},
                                  {.log_path = dir_ / "second.log"});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->Wait(absl::Seconds(30)), kExitConfig);
  EXPECT_THAT(ReadFile(dir_ / "second.log"), HasSubstr("in use by another farm-coordinator"));
  EXPECT_TRUE(StillServing());
}

TEST_F(RunningCoordinatorTest, WorkerWithoutCudaStillRegisters) {
  auto w = WorkerProcess::Start(coordinator_->grpc_address(), coordinator_->token_file(),
                                "cpu-only", dir_.path().string(), {"--cuda-path", "none"});
  ASSERT_TRUE(w.ok());
  nlohmann::json workers;
  ASSERT_TRUE(WaitFor(
      [&] {
        workers = ListWorkersJson(coordinator_->grpc_address(), coordinator_->token_file());
        return StateOf(workers, "cpu-only") == "online";
      },
      absl::Seconds(30)));
  EXPECT_TRUE(workers[0]["cuda"].empty());
  EXPECT_THAT(ReadFile(w->log_path()), HasSubstr("no CUDA toolkit"));
  w->process().Signal(SIGTERM);
  EXPECT_EQ(w->process().Wait(absl::Seconds(10)), 0);
}

TEST(WorkerFlagsTest, NamedToolkitThatDoesNotExistIsAConfigError) {
  TempDir dir("workerflags");
  std::ofstream(dir / "token") << "0123456789abcdef0123456789abcdef\n";
  auto r =
      RunCommand({FarmBinary("farm-worker"), "--coordinator", "127.0.0.1:1", "--token-file",
                  dir / "token", "--work-dir", dir / "work", "--cuda-path", "/nonexistent/cuda"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, kExitConfig);
  EXPECT_THAT(r->stderr_text, HasSubstr("/nonexistent/cuda"));
  auto bad_labels = RunCommand({FarmBinary("farm-worker"), "--token-file", dir / "token",
                                "--work-dir", dir / "work", "--labels", "oops"});
  ASSERT_TRUE(bad_labels.ok());
  EXPECT_EQ(bad_labels->exit_code, kExitConfig);
  EXPECT_THAT(bad_labels->stderr_text, HasSubstr("key=value"));
  auto no_token = RunCommand({FarmBinary("farm-worker"), "--work-dir", dir / "work"},
                             absl::Seconds(30), {"FARM_TOKEN_FILE="});
  ASSERT_TRUE(no_token.ok());
  EXPECT_EQ(no_token->exit_code, kExitConfig);
  EXPECT_THAT(no_token->stderr_text, HasSubstr("--token-file"));
}

TEST(CoordinatorDataDirTest, CorruptStateIsRefusedAndLeftUntouched) {
  TempDir dir("corrupt");
  {
    auto c = CoordinatorProcess::Start(dir / "data");
    ASSERT_TRUE(c.ok()) << c.status();
    auto w = WorkerProcess::Start(c->grpc_address(), c->token_file(), "w1", dir.path().string(),
                                  {"--cuda-path", "none"});
    ASSERT_TRUE(
        WaitFor([&] { return !ListWorkersJson(c->grpc_address(), c->token_file()).empty(); },
                absl::Seconds(30)));
    w->process().Signal(SIGKILL);
    c->Stop();
    w->process().Wait(absl::Seconds(5));
  }
  std::string manifest;
  for (const auto& e : fs::directory_iterator(dir / "data/state")) {
    if (e.path().filename().string().starts_with("MANIFEST-")) manifest = e.path().string();
  }
  ASSERT_FALSE(manifest.empty());
  { std::ofstream(manifest, std::ios::trunc) << "garbage, not a RocksDB manifest"; }
  auto before = fs::file_size(manifest);
  auto r = RunCommand({FarmBinary("farm-coordinator"), "--data-dir", dir / "data", "--listen",
                       "127.0.0.1:0", "--http-listen", ""});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, kExitConfig);
  EXPECT_THAT(r->stderr_text, HasSubstr("corrupt"));
  EXPECT_THAT(r->stderr_text, HasSubstr("Nothing was changed"));
  EXPECT_EQ(fs::file_size(manifest), before);
}

TEST(CoordinatorDataDirTest, UnwritableDataDirIsRefused) {
  TempDir dir("unwritable");
  std::ofstream(dir / "a-file") << "x";
  auto r = RunCommand({FarmBinary("farm-coordinator"), "--data-dir", dir / "a-file", "--listen",
                       "127.0.0.1:0", "--http-listen", ""});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, kExitConfig);
  EXPECT_THAT(r->stderr_text, HasSubstr("not a directory"));

  // A directory without write permission, seen by a non-root user (root ignores modes).
  fs::create_directories(dir / "readonly");
  fs::permissions(dir / "readonly", fs::perms::owner_read | fs::perms::owner_exec |
                                        fs::perms::group_read | fs::perms::group_exec |
                                        fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir.path(), fs::perms::others_exec | fs::perms::others_read,
                  fs::perm_options::add);
  std::vector<std::string> argv = {FarmBinary("farm-coordinator"),
                                   "--data-dir",
                                   dir / "readonly",
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--http-listen",
                                   ""};
  if (::geteuid() == 0) {
    // The build tree may sit where nobody cannot reach it; run a copy from the temp dir.
    fs::copy_file(FarmBinary("farm-coordinator"), dir / "farm-coordinator");
    argv[0] = dir / "farm-coordinator";
    argv.insert(argv.begin(), {"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"});
  }
  auto ro = RunCommand(argv, absl::Seconds(30), {"HOME=/tmp"});
  ASSERT_TRUE(ro.ok());
  EXPECT_EQ(ro->exit_code, kExitConfig) << ro->stderr_text;
  EXPECT_THAT(ro->stderr_text, HasSubstr("not writable"));
  EXPECT_TRUE(fs::is_empty(dir / "readonly"));
}

TEST(CoordinatorFlagsTest, MalformedAddressesAndDurationsAreConfigErrors) {
  TempDir dir("flags");
  auto r =
      RunCommand({FarmBinary("farm-coordinator"), "--data-dir", dir / "d", "--listen", "nonsense"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, kExitConfig);
  EXPECT_THAT(r->stderr_text, HasSubstr("127.0.0.1:7420"));
  auto t = RunCommand(
      {FarmBinary("farm-coordinator"), "--data-dir", dir / "d", "--worker-timeout", "soon"});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->exit_code, kExitConfig);
  EXPECT_THAT(t->stderr_text, HasSubstr("--worker-timeout"));
}

TEST(CoordinatorFlagsTest, PortInUseIsReported) {
  TempDir dir("port");
  auto first = CoordinatorProcess::Start(dir / "a");
  ASSERT_TRUE(first.ok()) << first.status();
  auto r = RunCommand({FarmBinary("farm-coordinator"), "--data-dir", dir / "b", "--listen",
                       first->grpc_address(), "--http-listen", ""});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, kExitFailure);
  EXPECT_THAT(r->stderr_text, HasSubstr("--listen"));
  first->Stop();
}

}  // namespace
}  // namespace farm::testing
