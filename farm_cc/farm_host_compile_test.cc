#include "farm_cc/farm_host_compile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "farm_cc/locale_files.h"

namespace farm {
namespace {

using ::testing::HasSubstr;

// The worker's compile sees what GCC reads from the environment, and nothing that would make
// it read or write files the farm does not carry.
TEST(CompileEnvironmentTest, PassesWhatTheCompilerReadsAndRefusesSideChannels) {
  auto env = CompileEnvironment({{"PATH", "/usr/bin:/bin"},
                                 {"LANG", "C.UTF-8"},
                                 {"CPATH", "/opt/inc"},
                                 {"HOME", "/root"},
                                 {"FARM_TOKEN_FILE", "/secret"},
                                 {"PWD", "/build"}},
                                "/build");
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("PATH"), "/usr/bin:/bin");
  EXPECT_EQ(env->at("LANG"), "C.UTF-8");
  EXPECT_EQ(env->at("CPATH"), "/opt/inc");
  EXPECT_EQ(env->at("PWD"), "/build");
  EXPECT_EQ(env->count("HOME"), 0u);
  EXPECT_EQ(env->count("FARM_TOKEN_FILE"), 0u);
  for (const char* name : {"DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES", "LD_PRELOAD"}) {
    auto refused = CompileEnvironment({{name, "x"}}, "/build");
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << name;
    EXPECT_THAT(refused.status().message(), HasSubstr(name));
  }
  // A PWD elsewhere is not GCC's name for the directory: dropped.
  auto other = CompileEnvironment({{"PWD", "/elsewhere"}}, "/build");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->count("PWD"), 0u);
}

TEST(LocaleFilesTest, NoneForTheCLocale) {
  EXPECT_TRUE(LocaleFiles({}).empty());
  EXPECT_TRUE(LocaleFiles({{"LANG", "C"}, {"LC_ALL", "POSIX"}}).empty());
}

// Debian's C.UTF-8 lives in /usr/lib/locale/C.utf8: a compile under it ships those files, so
// the worker's GCC quotes as this host's does.
TEST(LocaleFilesTest, AUtf8LocaleShipsItsFiles) {
  ASSERT_TRUE(std::filesystem::is_directory("/usr/lib/locale/C.utf8"))
      << "this test needs Debian's C.utf8 locale (package libc-bin)";
  const auto files = LocaleFiles({{"LANG", "C.UTF-8"}});
  EXPECT_THAT(files, ::testing::Contains(HasSubstr("/usr/lib/locale/C.utf8/LC_CTYPE")));
}

}  // namespace
}  // namespace farm
