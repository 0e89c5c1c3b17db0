#include "cli/backup_receiver.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kHash = std::string("ab") + std::string(62, '0');

farm::v1::BackupChunk Chunk(const std::string& path, int64_t size, const std::string& data) {
  farm::v1::BackupChunk c;
  c.set_path(path);
  c.set_size_bytes(size);
  c.set_data(data);
  return c;
}
farm::v1::BackupChunk More(const std::string& data) { return Chunk("", 0, data); }

std::string Manifest(uint64_t files, uint64_t bytes, uint64_t blobs) {
  return BackupManifestToJson({.version = "t", .files = files, .bytes = bytes, .blobs = blobs});
}

class BackupReceiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("backup-receiver-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    dir_ = (root_ / "b").string();
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string Read(const std::string& rel) {
    std::ifstream in(fs::path(dir_) / rel, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Feeds `chunks` and finishes; the first error.
  absl::Status Feed(const std::vector<farm::v1::BackupChunk>& chunks) {
    auto r = BackupReceiver::Begin(dir_);
    if (!r.ok()) return r.status();
    for (const auto& c : chunks) {
      if (absl::Status s = (*r)->Take(c); !s.ok()) return s;
    }
    return (*r)->Finish().status();
  }

  fs::path root_;
  std::string dir_;
};

TEST_F(BackupReceiverTest, WritesAWholeBackupIntoANewDirectory) {
  const std::string m = Manifest(2, 9, 1);
  ASSERT_TRUE(Feed({Chunk("state/CURRENT", 4, "MANI"), Chunk("cas/blobs/ab/" + kHash, 5, "he"),
                    More("llo"), Chunk("backup.json", static_cast<int64_t>(m.size()), m)})
                  .ok());
  EXPECT_EQ(Read("state/CURRENT"), "MANI");
  EXPECT_EQ(Read("cas/blobs/ab/" + kHash), "hello");
  EXPECT_EQ(Read("backup.json"), m);
  EXPECT_FALSE(fs::exists(dir_ + ".partial"));
}

TEST_F(BackupReceiverTest, AHostileOrBrokenStreamLeavesNothing) {
  const std::string m = Manifest(1, 4, 0);
  const auto manifest = Chunk("backup.json", static_cast<int64_t>(m.size()), m);
  struct Case {
    std::vector<farm::v1::BackupChunk> chunks;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{Chunk("../escape", 4, "evil"), manifest}, "not a file of a farm backup"},
      {{Chunk("/etc/passwd", 4, "evil"), manifest}, "/etc/passwd"},
      {{Chunk("state/CURRENT", 4, "too long"), manifest}, "sent more than the 4 bytes"},
      {{Chunk("state/CURRENT", 4, "ab"), manifest}, "after 2 of 4 bytes"},
      {{Chunk("state/CURRENT", -1, ""), manifest}, "declared"},
      {{More("orphan")}, "before naming their file"},
      {{Chunk("state/CURRENT", 4, "MANI")}, "ended without backup.json"},
      {{Chunk("state/CURRENT", 4, "MANI"), manifest, Chunk("state/X", 0, "")}, "after backup.json"},
      {{Chunk("state/A", 4, "MANI"), Chunk("state/A", 0, ""), manifest}, "twice"},
      {{Chunk("state/CURRENT", 4, "MANI"), Chunk("state/EXTRA", 1, "x"), manifest},
       "where its manifest says 1"},
  };
  for (const Case& c : cases) {
    absl::Status s = Feed(c.chunks);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << c.says << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(c.says));
    EXPECT_THAT(s.message(), HasSubstr("Fix:"));
    EXPECT_FALSE(fs::exists(dir_)) << c.says;
    EXPECT_FALSE(fs::exists(dir_ + ".partial")) << c.says;
    EXPECT_FALSE(fs::exists(root_ / "escape"));
  }
}

TEST_F(BackupReceiverTest, RefusesADirectoryThatHoldsSomething) {
  fs::create_directories(dir_);
  std::ofstream(fs::path(dir_) / "mine") << "keep";
  auto r = BackupReceiver::Begin(dir_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("already exists. Fix:"));
  EXPECT_EQ(Read("mine"), "keep");
}

}  // namespace
}  // namespace farm::cli
