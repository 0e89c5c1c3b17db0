#include "libfarm/backup/backup_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

const std::string kHash(64, 'a');

TEST(BackupLayoutTest, AcceptsOnlyTheFilesOfABackup) {
  EXPECT_TRUE(ValidateBackupPath("backup.json").ok());
  EXPECT_TRUE(ValidateBackupPath("state/000012.sst").ok());
  EXPECT_TRUE(ValidateBackupPath("state/MANIFEST-000005").ok());
  EXPECT_TRUE(ValidateBackupPath("cas/blobs/aa/" + kHash).ok());
  for (const std::string& bad :
       {std::string("../state/x"), std::string("/etc/passwd"), std::string("state/../x"),
        std::string("state/sub/x"), std::string("token"), std::string("cas/blobs/ab/" + kHash),
        std::string("cas/blobs/aa/" + kHash.substr(1) + "A"), std::string("cas/tmp/x"),
        std::string("")}) {
    absl::Status s = ValidateBackupPath(bad);
    EXPECT_FALSE(s.ok()) << bad;
  }
  EXPECT_THAT(ValidateBackupPath("token").message(), HasSubstr("'token'"));
}

TEST(BackupLayoutTest, ManifestRoundTripsAndRefusesOtherFormats) {
  BackupManifest m{.version = "0.9.0",
                   .created_at = "2026-11-25T06:00:00Z",
                   .files = 7,
                   .bytes = 1234,
                   .blobs = 3};
  auto back = ParseBackupManifest(BackupManifestToJson(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->files, 7u);
  EXPECT_EQ(back->bytes, 1234u);
  EXPECT_EQ(back->blobs, 3u);
  EXPECT_EQ(back->version, "0.9.0");
  EXPECT_FALSE(ParseBackupManifest("{").ok());
  EXPECT_FALSE(ParseBackupManifest(R"({"format": 1, "files": -1, "bytes": 0, "blobs": 0})").ok());
  auto future = ParseBackupManifest(R"({"format": 2, "files": 0, "bytes": 0, "blobs": 0})");
  EXPECT_EQ(future.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(future.status().message(), HasSubstr("Fix:"));
}

}  // namespace
}  // namespace farm
