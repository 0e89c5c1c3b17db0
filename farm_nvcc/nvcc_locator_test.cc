#include "farm_nvcc/nvcc_locator.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

class NvccLocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/nvcc-locator-XXXXXX";
    dir_ = mkdtemp(pattern);
    fs::create_directories(dir_ + "/cuda/bin");
    fs::create_directories(dir_ + "/shims");
    MakeExecutable(dir_ + "/cuda/bin/nvcc");
    MakeExecutable(dir_ + "/shims/nvcc");  // farm-nvcc installed under nvcc's name
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void MakeExecutable(const std::string& path) {
    std::ofstream(path) << "#!/bin/sh\n";
    chmod(path.c_str(), 0755);
  }
  std::string dir_;
};

TEST_F(NvccLocatorTest, LauncherFormTakesTheCompilerFromTheFirstArgument) {
  auto call = LocateNvcc({"farm-nvcc", dir_ + "/cuda/bin/nvcc", "-c", "k.cu"}, "", "", "");
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->nvcc, dir_ + "/cuda/bin/nvcc");
  EXPECT_THAT(call->args, ElementsAre("-c", "k.cu"));
}

// The ccache/sccache convention: the compiler named bare, found on PATH (never itself).
TEST_F(NvccLocatorTest, LauncherFormFindsABareCompilerNameOnPath) {
  auto call = LocateNvcc({"farm-nvcc", "nvcc", "-c", "k.cu", "-o", "k.o"}, dir_ + "/shims/nvcc",
                         dir_ + "/elsewhere", dir_ + "/shims:" + dir_ + "/cuda/bin");
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->nvcc, dir_ + "/cuda/bin/nvcc");
  EXPECT_THAT(call->args, ElementsAre("-c", "k.cu", "-o", "k.o"));
}

TEST_F(NvccLocatorTest, ABareCompilerNameNotOnPathNamesTheFix) {
  auto call = LocateNvcc({"farm-nvcc", "nvcc", "-c", "k.cu"}, "", "", dir_ + "/nowhere");
  ASSERT_FALSE(call.ok());
  EXPECT_THAT(std::string(call.status().message()), ::testing::HasSubstr("not on PATH"));
}

TEST_F(NvccLocatorTest, DropInPrefersCudaHome) {
  auto call = LocateNvcc({"farm-nvcc", "-c", "k.cu"}, "", dir_ + "/cuda", dir_ + "/shims");
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->nvcc, dir_ + "/cuda/bin/nvcc");
  EXPECT_THAT(call->args, ElementsAre("-c", "k.cu"));
}

TEST_F(NvccLocatorTest, DropInSkipsItselfOnPath) {
  auto call = LocateNvcc({"nvcc", "-c", "k.cu"}, dir_ + "/shims/nvcc", "",
                         dir_ + "/shims:" + dir_ + "/cuda/bin");
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->nvcc, dir_ + "/cuda/bin/nvcc");
}

TEST_F(NvccLocatorTest, NoNvccAnywhereNamesTheFix) {
  auto call = LocateNvcc({"farm-nvcc", "-c", "k.cu"}, "", "", dir_ + "/nowhere");
  ASSERT_FALSE(call.ok());
  EXPECT_THAT(std::string(call.status().message()), ::testing::HasSubstr("CUDA_HOME"));
}

}  // namespace
}  // namespace farm
