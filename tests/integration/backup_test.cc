// farmctl admin backup and farm-coordinator --restore-from, between real processes: a backup
// taken while the coordinator serves brings back its records and blobs into a new data dir;
// an incomplete or damaged backup and a data dir with state are refused, changing nothing.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class BackupTest : public ::testing::Test {
 protected:
  CommandResult Farmctl(const TestFarm& farm, const std::vector<std::string>& args) {
    return farm.Farmctl(args, {"XDG_STATE_HOME=" + (dir_ / "state")});
  }
  CommandResult Restore(const std::string& backup, const std::string& data_dir) {
    auto r = RunCommand(
        {FarmBinary("farm-coordinator"), "--data-dir", data_dir, "--restore-from", backup},
        absl::Seconds(60));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{.exit_code = -1};
  }

  TempDir dir_{"backup"};
};

TEST_F(BackupTest, AnOnlineBackupRestoresIntoANewDataDir) {
  // Records (a worker) and blobs to keep.
  auto farm = TestFarm::Start(
      dir_.path(), {.workers = {{.name = "keeper", .args = {"--cuda-path", "none"}, .slots = 0}}});
  ASSERT_TRUE(farm.ok()) << farm.status();
  TestFarm& c = **farm;
  c.KillWorker("keeper");
  std::vector<std::string> digests;
  for (int i = 0; i < 3; ++i) {
    const std::string file = dir_ / absl::StrCat("blob", i);
    WriteText(file,
              std::string(static_cast<size_t>(1000 + i * 700000), static_cast<char>('a' + i)));
    CommandResult put = Farmctl(c, {"cas", "put", file});
    ASSERT_EQ(put.exit_code, 0) << put.stderr_text;
    digests.emplace_back(absl::StripAsciiWhitespace(put.stdout_text));
  }

  CommandResult backup = Farmctl(c, {"--json", "admin", "backup", dir_ / "b"});
  ASSERT_EQ(backup.exit_code, 0) << backup.stderr_text;
  auto summary = nlohmann::json::parse(backup.stdout_text);
  EXPECT_EQ(summary["blobs"].get<int>(), 3);
  EXPECT_GT(summary["files"].get<int>(), 3);
  EXPECT_TRUE(fs::exists(dir_ / "b/backup.json"));
  EXPECT_FALSE(fs::exists(dir_ / "b.partial"));
  // The coordinator serves on, and a second backup into the same place is refused.
  EXPECT_EQ(Farmctl(c, {"cas", "stat", digests[0]}).exit_code, 0);
  CommandResult again = Farmctl(c, {"admin", "backup", dir_ / "b"});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.stderr_text, HasSubstr("already exists. Fix:"));
  farm->reset();

  // Into a new data dir; then that coordinator has everything.
  CommandResult restored = Restore(dir_ / "b", dir_ / "new");
  ASSERT_EQ(restored.exit_code, 0) << restored.stderr_text;
  EXPECT_THAT(restored.stderr_text + restored.stdout_text, HasSubstr("3 CAS blobs"));
  auto restored_farm = TestFarm::Start(dir_.path(), {.data_dir = "new"});
  ASSERT_TRUE(restored_farm.ok()) << restored_farm.status();
  TestFarm& n = **restored_farm;
  // The worker's record came back (its state is whatever the registry makes of a worker it has
  // not heard from since the restart).
  EXPECT_NE(n.WorkerState("keeper"), "");
  for (int i = 0; i < 3; ++i) {
    const std::string out = dir_ / absl::StrCat("got", i);
    CommandResult get = Farmctl(n, {"cas", "get", digests[static_cast<size_t>(i)], "-o", out});
    ASSERT_EQ(get.exit_code, 0) << get.stderr_text;
    EXPECT_EQ(ReadFile(out), ReadFile(dir_ / absl::StrCat("blob", i)));
  }
  restored_farm->reset();

  // A data dir with state is never overwritten.
  CommandResult over = Restore(dir_ / "b", dir_ / "new");
  EXPECT_EQ(over.exit_code, 2);
  EXPECT_THAT(over.stderr_text, HasSubstr("already holds farm state"));

  // A damaged blob or a missing manifest: refused, nothing restored.
  fs::copy(dir_ / "b", dir_ / "damaged", fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "damaged/cas")) {
    if (!e.is_regular_file()) continue;
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('!');
    break;
  }
  CommandResult damaged = Restore(dir_ / "damaged", dir_ / "other");
  EXPECT_EQ(damaged.exit_code, 2);
  EXPECT_THAT(damaged.stderr_text, HasSubstr("damaged blob"));
  EXPECT_FALSE(fs::exists(dir_ / "other/state"));
  fs::remove(dir_ / "b/backup.json");
  CommandResult incomplete = Restore(dir_ / "b", dir_ / "other");
  EXPECT_EQ(incomplete.exit_code, 2);
  EXPECT_THAT(incomplete.stderr_text, HasSubstr("has no backup.json"));
  EXPECT_THAT(incomplete.stderr_text, HasSubstr("Fix:"));
}

}  // namespace
}  // namespace farm::testing
