#include "libfarm/launcher/launcher_target.h"

#include <stdlib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::MatchesRegex;

// One id per working directory: the same tree is one build for both launchers, another tree
// another build.
TEST(LauncherTargetTest, TheDefaultBuildIdNamesTheDirectoryAndHashesItsPath) {
  EXPECT_THAT(DefaultBuildId("/src/proj/build"), MatchesRegex("nvcc-build-[0-9a-f]{8}"));
  EXPECT_EQ(DefaultBuildId("/src/proj/build"), DefaultBuildId("/src/proj/build"));
  EXPECT_NE(DefaultBuildId("/src/proj/build"), DefaultBuildId("/src/other/build"));
  EXPECT_THAT(DefaultBuildId("/"), MatchesRegex("nvcc-root-[0-9a-f]{8}"));
}

TEST(LauncherTargetTest, ReadsTheCoordinatorAndBuildFromTheEnvironment) {
  ::setenv("FARM_COORDINATOR", "farm.example:7420", 1);
  ::setenv("FARM_TOKEN_FILE", "/etc/farm/token", 1);
  ::setenv("FARM_BUILD_ID", "wheel-1", 1);
  const LauncherTarget set = LauncherTargetFromEnvironment();
  EXPECT_EQ(set.coordinator.coordinator, "farm.example:7420");
  EXPECT_EQ(set.coordinator.token_file, "/etc/farm/token");
  EXPECT_EQ(set.build_id, "wheel-1");
  ::setenv("FARM_BUILD_ID", "", 1);  // empty is unset: the working directory's id
  EXPECT_THAT(LauncherTargetFromEnvironment().build_id, MatchesRegex("nvcc-.*-[0-9a-f]{8}"));
  for (const char* name : {"FARM_COORDINATOR", "FARM_TOKEN_FILE", "FARM_BUILD_ID"}) {
    ::unsetenv(name);
  }
}

}  // namespace
}  // namespace farm
