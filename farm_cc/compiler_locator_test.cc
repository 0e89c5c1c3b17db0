#include "farm_cc/compiler_locator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class CompilerLocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("farm-cc-locator-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "masquerade");
    fs::create_directories(dir_ / "bin");
    self_ = (dir_ / "farm-cc").string();
    Executable(self_);
    Executable((dir_ / "bin" / "g++").string());
    fs::create_symlink("../farm-cc", dir_ / "masquerade" / "g++");
    path_ = (dir_ / "masquerade").string() + ":" + (dir_ / "bin").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void Executable(const std::string& path) {
    std::ofstream(path) << "#!/bin/sh\n";
    fs::permissions(path, fs::perms::owner_all);
  }

  fs::path dir_;
  std::string self_;
  std::string path_;
};

TEST_F(CompilerLocatorTest, ABareNameIsTheFirstOnPathThatIsNotFarmCc) {
  auto call = LocateCompiler({"farm-cc", "g++", "-c", "a.cc"}, self_, path_);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->compiler, (dir_ / "bin" / "g++").string());
  EXPECT_THAT(call->args, ElementsAre("-c", "a.cc"));
}

TEST_F(CompilerLocatorTest, APathIsTakenAsItIs) {
  const std::string gxx = (dir_ / "bin" / "g++").string();
  auto call = LocateCompiler({"/x/farm-cc", gxx, "-c", "a.cc"}, self_, path_);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->compiler, gxx);
}

// Masqueraded as g++ (a link to farm-cc first on PATH): the real g++ is the next one.
TEST_F(CompilerLocatorTest, AMasqueradeFindsTheRealCompilerAfterItself) {
  auto call = LocateCompiler({(dir_ / "masquerade" / "g++").string(), "-c", "a.cc"}, self_, path_);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->compiler, (dir_ / "bin" / "g++").string());
  EXPECT_THAT(call->args, ElementsAre("-c", "a.cc"));
  auto alone = LocateCompiler({"g++", "-c", "a.cc"}, self_, (dir_ / "masquerade").string());
  EXPECT_EQ(alone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(alone.status().message(), HasSubstr("Fix:"));
}

// CMake found the masquerade link as its compiler and runs farm-cc as the launcher too.
TEST_F(CompilerLocatorTest, ALauncherOfAMasqueradeLinkIsTheRealCompiler) {
  auto call = LocateCompiler({"farm-cc", (dir_ / "masquerade" / "g++").string(), "-c", "a.cc"},
                             self_, path_);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->compiler, (dir_ / "bin" / "g++").string());
  EXPECT_THAT(call->args, ElementsAre("-c", "a.cc"));
}

// A wrapper named g++ after the masquerade directory, which calls `g++`, is run by farm-cc;
// the farm-cc it reaches again skips it, and every other compiler its ancestors run.
TEST_F(CompilerLocatorTest, AChildOfFarmCcSkipsTheCompilersItsAncestorsRun) {
  fs::create_directories(dir_ / "wrapper");
  const std::string wrapper = (dir_ / "wrapper" / "g++").string();
  Executable(wrapper);
  const std::string path = (dir_ / "masquerade").string() + ":" + (dir_ / "wrapper").string() +
                           ":" + (dir_ / "bin").string();
  const std::string masquerade = (dir_ / "masquerade" / "g++").string();
  auto first = LocateCompiler({masquerade, "-c", "a.cc"}, self_, path);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->compiler, wrapper);
  auto again = LocateCompiler({masquerade, "-c", "a.cc"}, self_, path, {wrapper});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->compiler, (dir_ / "bin" / "g++").string());
  auto launcher = LocateCompiler({"farm-cc", "g++", "-c", "a.cc"}, self_, path, {wrapper});
  ASSERT_TRUE(launcher.ok()) << launcher.status();
  EXPECT_EQ(launcher->compiler, (dir_ / "bin" / "g++").string());
}

TEST_F(CompilerLocatorTest, MistakesSayWhatToDo) {
  EXPECT_THAT(LocateCompiler({"farm-cc"}, self_, path_).status().message(), HasSubstr("Usage"));
  EXPECT_THAT(LocateCompiler({"farm-cc", "clang++", "-c"}, self_, path_).status().message(),
              HasSubstr("not on PATH"));
  EXPECT_THAT(LocateCompiler({"farm-cc", self_, "-c"}, self_, path_).status().message(),
              HasSubstr("farm-cc itself"));
}

}  // namespace
}  // namespace farm
