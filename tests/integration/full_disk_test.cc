// A coordinator whose data dir fills up, on a real (small) filesystem: a tmpfs mounted in a
// private mount namespace that this test enters with nsenter. Uploads fail with a clear
// error, the log says "disk full" with the path once a minute, /metrics shows the free space;
// a restart on the full disk exits 2 with the fix (never an abort that systemd would loop
// on), and once space is freed the farm comes back with everything it had.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libfarm/auth/token.h"
#include "libfarm/files/json_file.h"
#include "libfarm/net/address.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/farm_processes.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The namespace's keeper: while it lives, the tmpfs below stays mounted for everything
    // started with In().
    auto keeper = Subprocess::Spawn({"unshare", "--user", "--map-root-user", "--mount",
                                     "--propagation", "private", "sleep", "600"});
    ASSERT_TRUE(keeper.ok()) << keeper.status() << " (unshare is in util-linux)";
    keeper_ = *keeper;
    const std::string own = fs::read_symlink("/proc/self/ns/mnt").string();
    ASSERT_TRUE(WaitFor(
        [&] {
          std::error_code ec;
          const auto ns = fs::read_symlink(absl::StrCat("/proc/", keeper_->pid(), "/ns/mnt"), ec);
          return !ec && ns.string() != own;
        },
        absl::Seconds(10)))
        << "unshare did not make a mount namespace: this host forbids user namespaces";
    fs::create_directories(disk_);
    ASSERT_TRUE(CreateTokenFile(token_).ok());
    CommandResult mount = Run({"mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", disk_});
    ASSERT_EQ(mount.exit_code, 0) << mount.stderr_text;
  }

  void TearDown() override {
    if (coordinator_) {
      coordinator_->Signal(SIGKILL);
      coordinator_->Wait(absl::Seconds(10));
    }
    if (keeper_) {
      keeper_->Signal(SIGKILL);
      keeper_->Wait(absl::Seconds(10));
    }
  }

  // `argv` inside the namespace, as its root (the caller's own uid outside).
  std::vector<std::string> In(const std::vector<std::string>& argv) {
    std::vector<std::string> all = {
        "nsenter", "-t", absl::StrCat(keeper_->pid()), "-U", "-m", "--preserve-credentials", "--"};
    all.insert(all.end(), argv.begin(), argv.end());
    return all;
  }
  CommandResult Run(const std::vector<std::string>& argv) {
    auto r = RunCommand(In(argv), absl::Seconds(60));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{.exit_code = -1};
  }

  // Starts the coordinator on the tmpfs; true once it serves, false if it exited (code in
  // `exit_code_`).
  bool StartCoordinator() {
    fs::remove(ready_);
    auto p = Subprocess::Spawn(
        In({FarmBinary("farm-coordinator"), "--data-dir", data_, "--token-file", token_, "--listen",
            "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--ready-file", ready_}),
        {.log_path = log_});
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return false;
    coordinator_ = *p;
    absl::StatusOr<nlohmann::json> info = absl::NotFoundError("");
    EXPECT_TRUE(WaitFor(
        [&] {
          if (auto code = coordinator_->Wait(absl::ZeroDuration())) {
            exit_code_ = *code;
            return true;
          }
          info = ReadJsonFile(ready_);
          return info.ok();
        },
        absl::Seconds(30)))
        << ReadFile(log_);
    if (!info.ok()) {
      coordinator_.reset();
      return false;
    }
    grpc_ = info->value("grpc", "");
    http_ = info->value("http", "");
    return true;
  }
  void KillCoordinator() {
    coordinator_->Signal(SIGKILL);
    coordinator_->Wait(absl::Seconds(10));
    coordinator_.reset();
  }

  CommandResult Farmctl(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--coordinator", grpc_, "--token-file", token_};
    all.insert(all.end(), args.begin(), args.end());
    return RunFarmctl(all, {"XDG_STATE_HOME=" + (dir_ / "state")});
  }
  std::string PutBlob(const std::string& name, size_t mib) {
    const std::string file = dir_ / name;
    std::ofstream out(file, std::ios::binary);
    std::string chunk(1 << 20, '\0');
    for (size_t i = 0; i < mib; ++i) {
      for (size_t j = 0; j < chunk.size(); j += 64)
        chunk[j] = static_cast<char>(i * 31 + j + name[0]);
      out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    }
    out.close();
    return file;
  }
  double FreeBytesMetric() {
    auto hp = ParseHostPort(http_);
    if (!hp.ok()) return -1;
    httplib::Client http(hp->host, hp->port);
    auto m = http.Get("/metrics");
    if (!m) return -1;
    std::smatch match;
    static const std::regex kLine(R"(\nfarm_data_dir_free_bytes ([0-9.e+]+)\n)");
    return std::regex_search(m->body, match, kLine) ? std::stod(match[1]) : -1;
  }

  TempDir dir_{"full-disk"};
  const std::string disk_ = dir_ / "disk";
  const std::string data_ = dir_ / "disk/data";
  const std::string token_ = dir_ / "token";
  const std::string ready_ = dir_ / "ready.json";
  const std::string log_ = dir_ / "coordinator.log";
  std::optional<Subprocess> keeper_, coordinator_;
  std::string grpc_, http_;
  int exit_code_ = -1;
};

TEST_F(FullDiskTest, UploadsFailClearlyARestartExits2AndFreedSpaceBringsItAllBack) {
  ASSERT_TRUE(StartCoordinator()) << "exit " << exit_code_ << ": " << ReadFile(log_);
  CommandResult kept = Farmctl({"cas", "put", PutBlob("kept.bin", 4)});
  ASSERT_EQ(kept.exit_code, 0) << kept.stderr_text;
  const std::string kept_digest(absl::StripAsciiWhitespace(kept.stdout_text));
  const double free_before = FreeBytesMetric();
  EXPECT_GT(free_before, 8 << 20);

  // Something else on the filesystem takes the rest of it.
  Run({"sh", "-c", "dd if=/dev/zero of=" + disk_ + "/filler bs=1M 2>/dev/null; true"});
  CommandResult full = Farmctl({"cas", "put", PutBlob("one.bin", 2)});
  EXPECT_NE(full.exit_code, 0);
  EXPECT_THAT(full.stderr_text, HasSubstr("No space left on device")) << full.stderr_text;
  CommandResult again = Farmctl({"cas", "put", PutBlob("two.bin", 2)});
  EXPECT_NE(again.exit_code, 0);
  // The coordinator still serves, says so once (not per upload), with the path and a fix.
  EXPECT_EQ(Farmctl({"cas", "stat", kept_digest}).exit_code, 0);
  const std::string log = ReadFile(log_);
  EXPECT_THAT(log, HasSubstr("disk full: "));
  EXPECT_THAT(log, HasSubstr(data_ + "/cas"));
  EXPECT_THAT(log, HasSubstr("Fix: free space on that filesystem"));
  size_t reports = 0;
  for (size_t at = log.find("disk full: "); at != std::string::npos;
       at = log.find("disk full: ", at + 1)) {
    ++reports;
  }
  EXPECT_EQ(reports, 1u) << log;
  EXPECT_GE(FreeBytesMetric(), 0);
  EXPECT_LT(FreeBytesMetric(), 1 << 20);

  // A restart on the full disk: exit 2 naming the problem and the fix, not an abort.
  KillCoordinator();
  EXPECT_FALSE(StartCoordinator()) << "started on a full disk";
  EXPECT_EQ(exit_code_, 2) << ReadFile(log_);
  EXPECT_THAT(ReadFile(log_), HasSubstr("disk full: free space on the filesystem of " + data_));
  EXPECT_THAT(ReadFile(log_), Not(HasSubstr("Assertion")));

  // Space freed: the farm starts with what it had.
  Run({"rm", disk_ + "/filler"});
  ASSERT_TRUE(StartCoordinator()) << "exit " << exit_code_ << ": " << ReadFile(log_);
  CommandResult get = Farmctl({"cas", "get", kept_digest, "-o", dir_ / "kept.out"});
  ASSERT_EQ(get.exit_code, 0) << get.stderr_text;
  EXPECT_EQ(ReadFile(dir_ / "kept.out"), ReadFile(dir_ / "kept.bin"));
  EXPECT_EQ(Farmctl({"cas", "put", dir_ / "one.bin"}).exit_code, 0);
}

}  // namespace
}  // namespace farm::testing
