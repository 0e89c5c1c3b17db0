#include "libfarm/nvcc/device_job.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace farm {
namespace {

namespace fs = std::filesystem;

TEST(HasLineInfoTest, ReadsNvccsOwnSpellingInTheScript) {
  DeviceJob job;
  job.script = "\"$FARM_CUDA_ROOT/nvvm/bin/cicc\" -arch compute_90 k.cpp1.ii -o k.ptx";
  EXPECT_FALSE(HasLineInfo(job));
  job.script += " && ptxas --generate-line-info k.ptx";
  EXPECT_TRUE(HasLineInfo(job));
}

// cicc's spelling in a -lineinfo PTX (the files follow the code), and the optional
// stamps after the name that PTX allows.
TEST(PtxSourceFilesTest, NamesEachFileDirectiveAsCiccSpelledIt) {
  const std::string ptx =
      "\t.loc\t1 2 30\n"
      "\t.loc\t2 1 38, function_name $L__info_string0, inlined_at 1 2 30\n"
      "\t.file\t1 \"/src/csrc/adam/multi_tensor_adam.cu\"\n"
      "\t.file\t2 \"csrc/includes/type_shim.h\", 1795721850, 5613\n"
      "\t.section\t.debug_str\n"
      "$L__info_string0:\n"
      "\t.b8 95\n";
  EXPECT_EQ(PtxSourceFiles(ptx), (std::vector<std::string>{"/src/csrc/adam/multi_tensor_adam.cu",
                                                           "csrc/includes/type_shim.h"}));
  EXPECT_TRUE(PtxSourceFiles(".version 9.0\n.target sm_90\n").empty());
}

class StampsOfFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("stamps_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "inc");
    std::ofstream(dir_ / "k.cu") << "__global__ void k() {}\n";
    std::ofstream(dir_ / "inc" / "h.cuh") << "// header\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(StampsOfFilesTest, AbsoluteNormalOnceAndOnlyWhatExists) {
  const std::string k = (dir_ / "k.cu").string();
  const std::string h = (dir_ / "inc" / "h.cuh").string();
  struct stat st {};
  ASSERT_EQ(::stat(h.c_str(), &st), 0);
  const auto stamps = StampsOfFiles(
      {k, "inc/./h.cuh", (dir_ / "inc" / ".." / "k.cu").string(), "missing.h", dir_.string()},
      dir_.string(), 10);
  ASSERT_EQ(stamps.size(), 2u);
  EXPECT_EQ(stamps[0].path, k);
  EXPECT_EQ(stamps[0].size_bytes, 23u);
  EXPECT_EQ(stamps[1].path, h);
  EXPECT_EQ(stamps[1].size_bytes, 10u);
  EXPECT_EQ(stamps[1].mtime_seconds, st.st_mtim.tv_sec);
}

TEST_F(StampsOfFilesTest, OverTheLimitGivesNone) {
  const std::vector<std::string> files = {(dir_ / "k.cu").string(),
                                          (dir_ / "inc" / "h.cuh").string()};
  EXPECT_EQ(StampsOfFiles(files, dir_.string(), 2).size(), 2u);
  EXPECT_TRUE(StampsOfFiles(files, dir_.string(), 1).empty());
}

}  // namespace
}  // namespace farm
