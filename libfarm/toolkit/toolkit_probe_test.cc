#include "libfarm/toolkit/toolkit_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::ElementsAre;

TEST(ToolkitProbeTest, ParsesNvccVersion) {
  const std::string text =
      "nvcc: NVIDIA (R) Cuda compiler driver\n"
      "Copyright (c) 2005-2025 NVIDIA Corporation\n"
      "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\n"
      "Cuda compilation tools, release 13.0, V13.0.88\n"
      "Build cuda_13.0.r13.0/compiler.36424714_0\n";
  auto v = ParseNvccVersion(text);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->first, "13.0");
  EXPECT_EQ(v->second, "V13.0.88");
}

TEST(ToolkitProbeTest, RejectsTextWithoutRelease) {
  EXPECT_FALSE(ParseNvccVersion("gcc (Debian 12.2.0) 12.2.0").ok());
}

TEST(ToolkitProbeTest, ParsesGpuCodeListKeepingOrder) {
  EXPECT_THAT(ParseGpuCodeList("sm_75\nsm_80\nsm_110\nsm_103\nsm_121\ncompute_90\n"),
              ElementsAre("sm_75", "sm_80", "sm_110", "sm_103", "sm_121"));
}

// The installed toolkit is part of every Wheelfarm host; this checks the probe against it.
TEST(ToolkitProbeTest, ProbesInstalledToolkit) {
  auto roots = DiscoverToolkitRoots();
  ASSERT_FALSE(roots.empty()) << "no CUDA toolkit found: install one (nvcc on PATH)";
  auto info = ProbeToolkit(roots.front());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->version.empty());
  EXPECT_THAT(info->sms, ::testing::Contains("sm_90"));
}

TEST(ToolkitProbeTest, MissingNvccNamesTheFix) {
  auto info = ProbeToolkit("/nonexistent-cuda");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(info.status().message().find("--cuda-path"), std::string::npos);
}

}  // namespace
}  // namespace farm
