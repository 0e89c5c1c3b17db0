#include "worker/wheel_prerequisites.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class WheelPrerequisitesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("wheel-prereq-test-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "-",
                        getpid());
    fs::remove_all(dir_);
    // What pip leaves for nvidia-nccl-cu13 2.27.7: the versioned library only.
    site_ = dir_ / "site-packages";
    fs::create_directories(site_ / "nvidia" / "nccl" / "lib");
    fs::create_directories(site_ / "nvidia" / "nccl" / "include");
    fs::create_directories(site_ / "nvidia_nccl_cu13-2.27.7.dist-info");
    std::ofstream(site_ / "nvidia" / "nccl" / "lib" / "libnccl.so.2") << "x";
    fs::create_directories(dir_ / "cuda" / "lib64");
    recipe_.file = "/recipes/torch.toml";
    recipe_.prerequisites = {
        Prerequisite{.name = "NCCL",
                     .version = ">=2.27",
                     .wheel = "nvidia-nccl-cu{cuda_major}>=2.27",
                     .linker_names = {"{site_packages}/nvidia/nccl/lib/libnccl.so.2"},
                     .env = {{"NCCL_INCLUDE_DIR", "{site_packages}/nvidia/nccl/include"},
                             {"NCCL_LIB_DIR", "{site_packages}/nvidia/nccl/lib"},
                             {"USE_SYSTEM_NCCL", "1"}},
                     .line = 57},
        Prerequisite{.name = "cuDNN",
                     .host_library = "libcudnn.so.9",
                     .env = {{"CUDNN_LIB_DIR", "{cuda_home}/lib64"}},
                     .line = 70}};
  }
  void TearDown() override { fs::remove_all(dir_); }
  PrerequisiteValues Values() const {
    return {
        .site_packages = site_.string(), .cuda = {13, 0}, .cuda_home = (dir_ / "cuda").string()};
  }

  fs::path dir_, site_;
  Recipe recipe_;
};

TEST_F(WheelPrerequisitesTest, InstalledVersionsComeFromDistInfoNamesAsPipCompares) {
  EXPECT_EQ(*InstalledVersion(site_.string(), "nvidia-nccl-cu13"), "2.27.7");
  EXPECT_EQ(*InstalledVersion(site_.string(), "NVIDIA.nccl_CU13"), "2.27.7");
  EXPECT_EQ(InstalledVersion(site_.string(), "nvidia-nccl-cu12").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(InstalledVersion(site_.string(), "nvidia-nccl").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(WheelPrerequisitesTest, SetsUpLinkerNamesChecksPathsAndFillsTheVariables) {
  auto lines = SetUpPrerequisites(recipe_, Values());
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_THAT(*lines, ElementsAre("prerequisite NCCL >=2.27: nvidia-nccl-cu13 2.27.7 (wheel)",
                                  "prerequisite cuDNN: libcudnn.so.9 (this host's)"));
  const fs::path link = site_ / "nvidia" / "nccl" / "lib" / "libnccl.so";
  ASSERT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), "libnccl.so.2");
  // Again (a reused environment): the link stays, nothing fails.
  ASSERT_TRUE(SetUpPrerequisites(recipe_, Values()).ok());

  auto vars = PrerequisiteVariables(recipe_, Values());
  ASSERT_TRUE(vars.ok()) << vars.status();
  EXPECT_EQ(vars->at("NCCL_LIB_DIR"), (site_ / "nvidia" / "nccl" / "lib").string());
  EXPECT_EQ(vars->at("NCCL_INCLUDE_DIR"), (site_ / "nvidia" / "nccl" / "include").string());
  EXPECT_EQ(vars->at("USE_SYSTEM_NCCL"), "1");
  EXPECT_EQ(vars->at("CUDNN_LIB_DIR"), (dir_ / "cuda" / "lib64").string());
}

TEST_F(WheelPrerequisitesTest, WhatIsNotThereIsNamedWithTheRecipeLineAndFix) {
  fs::remove_all(dir_ / "cuda" / "lib64");
  auto s = SetUpPrerequisites(recipe_, Values());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.status().message(),
            absl::StrCat("prerequisite cuDNN: CUDNN_LIB_DIR names ", (dir_ / "cuda").string(),
                         "/lib64, which does not exist ([[prerequisites]] \"cuDNN\" host_library "
                         "= \"libcudnn.so.9\" (/recipes/torch.toml:70)). Fix: point CUDNN_LIB_DIR "
                         "at where cuDNN is on the build hosts"));

  fs::remove_all(site_ / "nvidia_nccl_cu13-2.27.7.dist-info");
  fs::create_directories(site_ / "nvidia_nccl_cu13-2.26.2.dist-info");
  s = SetUpPrerequisites(recipe_, Values());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(),
              HasSubstr("prerequisite NCCL: nvidia-nccl-cu13 2.26.2 was installed, and NCCL "
                        ">=2.27 is needed ([[prerequisites]] \"NCCL\" wheel = "
                        "\"nvidia-nccl-cu{cuda_major}>=2.27\" (/recipes/torch.toml:57)). Fix: give "
                        "the wheel requirement a version that matches (nvidia-nccl-cu13>=2.27)"));

  // With CUDA 12 the cu12 wheel is looked for: a cu13 one does not count.
  s = SetUpPrerequisites(recipe_, {.site_packages = site_.string(), .cuda = {12, 9}});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(),
              HasSubstr("pip installed nvidia-nccl-cu12>=2.27 but nvidia-nccl-cu12 is not in"));
}

TEST_F(WheelPrerequisitesTest, SitePackagesNeedsAWorkingPython) {
  auto s = SitePackagesOf((dir_ / "no-env").string());
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace farm::worker
