#include "libfarm/launcher/launcher_target.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::MatchesRegex;

EnvironmentLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) {
    auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  };
}

// One id per working directory: the same tree is one build for both launchers, another tree
// another build.
TEST(LauncherTargetTest, TheDefaultBuildIdNamesTheDirectoryAndHashesItsPath) {
  EXPECT_THAT(DefaultBuildId("/src/proj/build"), MatchesRegex("nvcc-build-[0-9a-f]{8}"));
  EXPECT_EQ(DefaultBuildId("/src/proj/build"), DefaultBuildId("/src/proj/build"));
  EXPECT_NE(DefaultBuildId("/src/proj/build"), DefaultBuildId("/src/other/build"));
  EXPECT_THAT(DefaultBuildId("/"), MatchesRegex("nvcc-root-[0-9a-f]{8}"));
}

TEST(LauncherTargetTest, ReadsTheCoordinatorAndBuildBothLaunchersUse) {
  const LauncherTarget set = LauncherTargetFrom(Env({{"FARM_COORDINATOR", "farm.example:7420"},
                                                     {"FARM_DIR", "/srv/farm"},
                                                     {"FARM_TOKEN_FILE", "/etc/farm/token"},
                                                     {"FARM_TLS_CA", "/etc/farm/ca.pem"},
                                                     {"FARM_BUILD_ID", "wheel-1"}}));
  EXPECT_EQ(set.coordinator.coordinator, "farm.example:7420");
  EXPECT_EQ(set.coordinator.farm_dir, "/srv/farm");
  EXPECT_EQ(set.coordinator.token_file, "/etc/farm/token");
  EXPECT_EQ(set.coordinator.tls.ca_file, "/etc/farm/ca.pem");
  EXPECT_EQ(set.build_id, "wheel-1");
  // No FARM_BUILD_ID: the working directory's id.
  EXPECT_THAT(LauncherTargetFrom(Env({})).build_id, MatchesRegex("nvcc-.*-[0-9a-f]{8}"));
}

}  // namespace
}  // namespace farm
