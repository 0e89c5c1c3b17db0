#include "farm_nvcc/strict_mode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(StrictModeTest, NamesTheSourceFileNotTheOutputs) {
  EXPECT_EQ(CallSourceFile({"/usr/local/cuda/bin/nvcc",
                            {"-MD", "-MT", "k.cu.o", "-MF", "k.cu.o.d", "-G", "-c",
                             "/src/kernels/k.cu", "-o", "k.cu.o"}}),
            "/src/kernels/k.cu");
  EXPECT_EQ(CallSourceFile({"nvcc", {"-x", "cu", "-c", "main.cpp", "-o", "main.o"}}), "main.cpp");
  EXPECT_EQ(CallSourceFile({"nvcc", {"--version"}}), "the nvcc call");
}

TEST(StrictModeTest, MessageNamesCallReasonAndFix) {
  const std::string m =
      StrictModeMessage({"nvcc", {"-G", "-c", "k.cu", "-o", "k.o"}},
                        "not decomposable: -G device debug info records the compiling directory");
  EXPECT_THAT(m, StartsWith("farm-nvcc: strict mode: k.cu would run plain nvcc: not "
                            "decomposable: -G device debug info records the compiling directory. "
                            "Fix: "));
  EXPECT_THAT(m, HasSubstr("FARM_NVCC_STRICT"));
  EXPECT_THAT(m, HasSubstr("strict_nvcc"));
}

}  // namespace
}  // namespace farm
