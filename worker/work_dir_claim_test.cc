#include "worker/work_dir_claim.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace farm::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class WorkDirClaimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("work-dir-claim-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(WorkDirClaimTest, TheInstanceIdIsMadeOnceAndKeptAcrossClaims) {
  std::string first;
  {
    auto claim = ClaimWorkDir(dir_.string());
    ASSERT_TRUE(claim.ok()) << claim.status();
    first = claim->instance_id;
    EXPECT_EQ(first.size(), 32u);
  }
  auto again = ClaimWorkDir(dir_.string());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->instance_id, first);
}

TEST_F(WorkDirClaimTest, ASecondClaimWhileHeldIsRefusedWithTheFix) {
  auto held = ClaimWorkDir(dir_.string());
  ASSERT_TRUE(held.ok()) << held.status();
  // flock locks belong to open file descriptions: a second open in this process conflicts too.
  auto second = ClaimWorkDir(dir_.string());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("in use by another farm-worker"));
  EXPECT_THAT(second.status().message(), HasSubstr("Fix:"));
}

TEST_F(WorkDirClaimTest, AMangledInstanceIdFileIsReplaced) {
  std::ofstream(dir_ / "instance-id") << "../../etc\n";
  auto claim = ClaimWorkDir(dir_.string());
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(claim->instance_id.size(), 32u);
  EXPECT_NE(claim->instance_id, "../../etc");
}

}  // namespace
}  // namespace farm::worker
