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
#include "farm/v1/builds.grpc.pb.h"
#include "farm/v1/recipes.grpc.pb.h"
#include "farm/v1/worker_service.grpc.pb.h"
#include "libfarm/auth/token.h"
#include "libfarm/digest/digest.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/token_auth.h"
#include "libfarm/status/exit_code.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RunningCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto farm = TestFarm::Start(dir_.path(), FarmOptions{});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
    std::ofstream(dir_ / "wrong-token") << "ffffffffffffffffffffffffffffffff\n";
  }
  CommandResult Farmctl(const std::vector<std::string>& args, const std::string& token_file) {
    std::vector<std::string> all = {"--coordinator", farm_->address()};
    if (!token_file.empty()) {
      all.push_back("--token-file");
      all.push_back(token_file);
    }
    all.insert(all.end(), args.begin(), args.end());
    // An isolated state home, so no local farm's token is picked up.
    return RunFarmctl(all, {"XDG_STATE_HOME=" + (dir_ / "state"), "FARM_TOKEN_FILE="});
  }
  bool StillServing() { return Farmctl({"status"}, farm_->admin_token_file()).exit_code == 0; }

  TempDir dir_{"badinput"};
  std::unique_ptr<TestFarm> farm_;
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
  auto w = farm_->StartWorker({.name = "intruder", .slots = 0, .token_file = dir_ / "wrong-token"});
  ASSERT_TRUE(w.ok()) << w.status();
  WorkerProcess& intruder = **w;
  EXPECT_EQ(intruder.process().Wait(absl::Seconds(30)), kExitUnauthenticated);
  EXPECT_THAT(ReadFile(intruder.log_path()), HasSubstr("token does not match"));
  EXPECT_TRUE(farm_->ListWorkers().empty());
}

TEST_F(RunningCoordinatorTest, OversizedNamesAreRefusedByFarmctlAndByTheCoordinator) {
  const std::string huge(100000, 'a');
  // farmctl refuses before it sends: exit 2, the field and the limit, not the value.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"submit", huge, "--archs", "7.5"},
        {"submit", "demo-0.1.0", "--archs", std::string(5000, ';')},
        {"build", huge},
        {"logs", huge},
        {"cancel", huge}}) {
    CommandResult r = Farmctl(args, farm_->admin_token_file());
    EXPECT_EQ(r.exit_code, kExitConfig) << args[0] << ": " << r.stderr_text.substr(0, 300);
    EXPECT_THAT(r.stderr_text, HasSubstr("; the limit is "));
    EXPECT_LT(r.stderr_text.size(), 1000u);
  }

  // A client that skips those checks meets the coordinator's own, answered in a few words
  // (an echo of the value would not fit in gRPC's response metadata).
  const std::string token = farm_->AdminToken();
  auto channel = DialCoordinator(farm_->address());
  auto prepare = [&](grpc::ClientContext& ctx) { AttachToken(ctx, token); };
  auto expect_refused = [&](const grpc::Status& s, const std::string& says) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(says));
    EXPECT_LT(s.error_message().size(), 1000u);
  };
  auto builds = farm::v1::BuildService::NewStub(channel);
  {
    grpc::ClientContext ctx;
    prepare(ctx);
    farm::v1::SubmitBuildRequest req;
    req.set_recipe(huge);
    farm::v1::SubmitBuildResponse resp;
    expect_refused(builds->SubmitBuild(&ctx, req, &resp), "the recipe name is 100000 bytes");
  }
  {
    grpc::ClientContext ctx;
    prepare(ctx);
    farm::v1::GetBuildRequest req;
    req.set_build_id(huge);
    farm::v1::Build resp;
    expect_refused(builds->GetBuild(&ctx, req, &resp), "the build id is 100000 bytes");
  }
  {
    grpc::ClientContext ctx;
    prepare(ctx);
    farm::v1::GetRecipeRequest req;
    req.set_name(huge);
    farm::v1::GetRecipeResponse resp;
    expect_refused(farm::v1::RecipeService::NewStub(channel)->GetRecipe(&ctx, req, &resp),
                   "the recipe name is 100000 bytes");
  }
  {
    grpc::ClientContext ctx;
    prepare(ctx);
    farm::v1::RegisterRequest req;
    req.set_name(huge);
    req.mutable_capabilities()->set_slots(1);
    farm::v1::RegisterResponse resp;
    expect_refused(farm::v1::WorkerService::NewStub(channel)->Register(&ctx, req, &resp),
                   "invalid worker name");
  }
  {
    grpc::ClientContext ctx;
    prepare(ctx);
    farm::v1::RegisterRequest req;
    req.set_name("labelled");
    req.mutable_capabilities()->set_slots(1);
    (*req.mutable_capabilities()->mutable_labels())["rack"] = huge;
    farm::v1::RegisterResponse resp;
    expect_refused(farm::v1::WorkerService::NewStub(channel)->Register(&ctx, req, &resp),
                   "label 'rack' is 100000 bytes");
  }
  EXPECT_TRUE(farm_->ListWorkers().empty());
  EXPECT_TRUE(StillServing());
}

TEST_F(RunningCoordinatorTest, ASourceTreeTooLargeToSubmitIsRefusedBeforeAnyUpload) {
  const fs::path tree = dir_ / "huge-tree";
  for (int d = 0; d < 101; ++d) {
    const fs::path sub = tree / absl::StrCat("pkg/module_", d);
    fs::create_directories(sub);
    for (int f = 0; f < 1000; ++f) {
      std::ofstream(sub / absl::StrCat("file_", f, ".py")) << "# " << d << "/" << f << "\n";
    }
  }
  CommandResult r = Farmctl({"submit", "demo-0.1.0", "--archs", "9.0", "--source", tree.string()},
                            farm_->admin_token_file());
  EXPECT_EQ(r.exit_code, kExitConfig) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr("has 101000 files"));
  EXPECT_THAT(r.stderr_text, HasSubstr("Nothing was uploaded. Fix:"));
  // Not one of its files reached the CAS.
  auto digest = DigestOfFile((tree / "pkg/module_7/file_7.py").string());
  ASSERT_TRUE(digest.ok());
  CommandResult stat =
      Farmctl({"cas", "stat", absl::StrCat(digest->hash(), "/", digest->size_bytes())},
              farm_->admin_token_file());
  EXPECT_THAT(stat.stderr_text, HasSubstr("is not in the CAS")) << stat.stdout_text;
  EXPECT_TRUE(StillServing());
}

TEST_F(RunningCoordinatorTest, GarbageOnTheGrpcPortDoesNotHurt) {
  for (const std::string& payload :
       {std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), std::string(4096, '\xff'),
        std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string(100, '\x00')}) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(farm_->coordinator().port()));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_GT(send(fd, payload.data(), payload.size(), MSG_NOSIGNAL), 0);
    close(fd);
  }
  EXPECT_FALSE(farm_->coordinator().process().Wait(absl::Milliseconds(200)).has_value());
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
  auto w = farm_->StartWorker({.name = "cpu-only", .args = {"--cuda-path", "none"}, .slots = 0});
  ASSERT_TRUE(w.ok()) << w.status();
  absl::Status online = farm_->WaitUntilOnline({"cpu-only"});
  ASSERT_TRUE(online.ok()) << online;
  nlohmann::json workers = farm_->ListWorkers();
  EXPECT_TRUE(workers[0]["cuda"].empty());
  EXPECT_THAT(ReadFile((*w)->log_path()), HasSubstr("no CUDA toolkit"));
  EXPECT_EQ(farm_->StopWorker("cpu-only"), 0);
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

// A 1 KB wheel whose member declares 3 GB: verify used to allocate the declared size (3.16 GB
// peak). Under a 256 MiB heap limit it must still finish with a clear report: the archive's
// declared sizes are refused when it is opened, before anything is inflated.
TEST(VerifyBadWheelTest, MemberDeclaringGigabytesCostsNoMemory) {
  TempDir dir("liarwheel");
  const char* kScript = R"(import sys, zipfile
path = sys.argv[1] + "/liar-1.0-py3-none-any.whl"
with zipfile.ZipFile(path, "w") as z:
    z.writestr("liar/lib.so", b"\0" * 1000000, zipfile.ZIP_DEFLATED)
data = bytearray(open(path, "rb").read())
for magic, field in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
    at = data.find(magic) + field
    data[at:at + 4] = (3000000000).to_bytes(4, "little")
open(path, "wb").write(data)
)";
  auto made = RunCommand({"python3", "-c", kScript, dir.path().string()});
  ASSERT_TRUE(made.ok() && made->exit_code == 0) << (made.ok() ? made->stderr_text : "");
  const std::string wheel = dir / "liar-1.0-py3-none-any.whl";
  ASSERT_LT(fs::file_size(wheel), 4096u);
  auto r = RunCommand(
      {"prlimit", "--data=268435456", FarmBinary("farmctl"), "verify", wheel, "--archs", "9.0"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 1) << r->stdout_text << r->stderr_text;
  EXPECT_THAT(r->stdout_text + r->stderr_text, HasSubstr("nothing was inflated"));
}

// inspect takes several paths, as verify does: each is listed, a missing one is named.
TEST(InspectCommandTest, TakesSeveralPathsAndNamesOneThatIsMissing) {
  const std::string first = FarmBinary("farmctl"), second = FarmBinary("farm-worker");
  CommandResult both = RunFarmctl({"inspect", first, second});
  EXPECT_EQ(both.exit_code, 0) << Output(both);
  EXPECT_THAT(both.stdout_text, HasSubstr(first + "  (ELF"));
  EXPECT_THAT(both.stdout_text, HasSubstr(second + "  (ELF"));
  CommandResult json = RunFarmctl({"--json", "inspect", first, second});
  ASSERT_EQ(json.exit_code, 0) << Output(json);
  EXPECT_EQ(nlohmann::json::parse(json.stdout_text)["files"].size(), 2u);
  CommandResult missing = RunFarmctl({"inspect", first, "/nonexistent/lib.so"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.stderr_text, HasSubstr("/nonexistent/lib.so"));
}

TEST(CoordinatorDataDirTest, CorruptStateIsRefusedAndLeftUntouched) {
  TempDir dir("corrupt");
  {
    auto farm = TestFarm::Start(
        dir.path(), {.workers = {{.name = "w1", .args = {"--cuda-path", "none"}, .slots = 0}}});
    ASSERT_TRUE(farm.ok()) << farm.status();
    (*farm)->worker("w1").process().Signal(SIGKILL);
    (*farm)->StopCoordinator();
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

// A farm whose coordinator was killed -9 after a worker registered: its records are in the
// WAL only.
void KilledFarmWithAWorker(const TempDir& dir) {
  auto farm = TestFarm::Start(
      dir.path(), {.workers = {{.name = "w1", .args = {"--cuda-path", "none"}, .slots = 0}}});
  ASSERT_TRUE(farm.ok()) << farm.status();
  (*farm)->StopCoordinator();
  (*farm)->KillWorker("w1");
}

CommandResult StartCoordinatorOnce(const TempDir& dir, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {FarmBinary("farm-coordinator"),
                                   "--data-dir",
                                   dir / "data",
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--http-listen",
                                   ""};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = RunCommand(argv, absl::Seconds(60));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : CommandResult{};
}

// 10 bytes written into the middle of the WAL used to be dropped without a word, with every
// acknowledged record behind them (two COMPLETED actions came back RUNNING and QUEUED).
TEST(CoordinatorDataDirTest, CorruptWalIsRefusedAndRepairIsExplicit) {
  TempDir dir("corruptwal");
  KilledFarmWithAWorker(dir);
  std::string wal;
  for (const auto& e : fs::directory_iterator(dir / "data/state")) {
    if (e.path().extension() == ".log" && fs::file_size(e.path()) > 0) wal = e.path().string();
  }
  ASSERT_FALSE(wal.empty()) << "no write-ahead log after kill -9";
  const auto size = fs::file_size(wal);
  {
    std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.write("0123456789", 10);
  }
  std::string damaged;
  {
    std::ifstream in(wal, std::ios::binary);
    damaged.assign(std::istreambuf_iterator<char>(in), {});
  }

  auto refused = StartCoordinatorOnce(dir);
  EXPECT_EQ(refused.exit_code, kExitConfig) << refused.stderr_text;
  EXPECT_THAT(refused.stderr_text, HasSubstr("corrupt"));
  EXPECT_THAT(refused.stderr_text, HasSubstr("--repair"));
  {
    std::ifstream in(wal, std::ios::binary);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), damaged)
        << "refusing must not touch the log";
  }

  auto repaired = StartCoordinatorOnce(dir, {"--repair"});
  EXPECT_EQ(repaired.exit_code, 0) << repaired.stderr_text;
  EXPECT_THAT(repaired.stderr_text, HasSubstr("before the repair is in"));
  bool copy_kept = false;
  for (const auto& e : fs::directory_iterator(dir / "data")) {
    if (e.path().filename().string().starts_with("state.before-repair-")) {
      copy_kept = fs::exists(e.path() / fs::path(wal).filename());
    }
  }
  EXPECT_TRUE(copy_kept) << "the damaged state must be copied aside before repairing";
  auto farm = TestFarm::Start(dir.path(), FarmOptions{});
  EXPECT_TRUE(farm.ok()) << farm.status();
}

TEST(CoordinatorDataDirTest, CurrentNamingAMissingManifestIsAConfigErrorWithTheFix) {
  TempDir dir("nomanifest");
  KilledFarmWithAWorker(dir);
  { std::ofstream(dir / "data/state/CURRENT", std::ios::trunc) << "MANIFEST-999999\n"; }
  auto r = StartCoordinatorOnce(dir);
  EXPECT_EQ(r.exit_code, kExitConfig) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr("corrupt"));
  EXPECT_THAT(r.stderr_text, HasSubstr("Fix:"));
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
  auto first = TestFarm::Start(dir.path(), {.data_dir = "a"});
  ASSERT_TRUE(first.ok()) << first.status();
  auto r = RunCommand({FarmBinary("farm-coordinator"), "--data-dir", dir / "b", "--listen",
                       (*first)->address(), "--http-listen", ""});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, kExitFailure);
  EXPECT_THAT(r->stderr_text, HasSubstr("--listen"));
}

}  // namespace
}  // namespace farm::testing
