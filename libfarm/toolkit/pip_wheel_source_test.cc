#include "libfarm/toolkit/pip_wheel_source.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(PipOutputTest, ErrorsKeepPipsOwnWordsIncludingTheVersionsOnOffer) {
  const std::string out =
      "Looking in links: /opt/wheels\n"
      "ERROR: Could not find a version that satisfies the requirement "
      "nvidia-cuda-nvcc==13.0.99 (from versions: 13.0.48, 13.0.88)\n"
      "ERROR: No matching distribution found for nvidia-cuda-nvcc==13.0.99\n";
  EXPECT_EQ(PipErrors(out),
            "Could not find a version that satisfies the requirement nvidia-cuda-nvcc==13.0.99 "
            "(from versions: 13.0.48, 13.0.88); No matching distribution found for "
            "nvidia-cuda-nvcc==13.0.99");
  EXPECT_EQ(PipErrors("Collecting x\n"), "");
}

TEST(PipOutputTest, AvailableVersionsLine) {
  EXPECT_EQ(PipAvailableVersions("nvidia-cuda-nvcc (13.5.37)\n"
                                 "Available versions: 13.5.37, 13.4.92, 13.0.88\n"),
            "13.5.37, 13.4.92, 13.0.88");
  EXPECT_EQ(PipAvailableVersions("ERROR: No matching distribution found for x\n"), "");
}

TEST(PipWheelSourceTest, AnInterpreterWithoutPipIsRefusedWithAFix) {
  auto source = PipWheelSource::Find("/bin/false");
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(source.status().message().find("Fix: apt-get install python3-pip"), std::string::npos)
      << source.status();
}

}  // namespace
}  // namespace farm
