#include "libfarm/toolkit/toolkit_pins.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "libfarm/versions/dotted_version.h"

namespace farm {
namespace {

TEST(ToolkitPinsTest, EachReleaseIsFiveExactWheelsOldestFirst) {
  std::set<std::string> releases;
  std::string previous = "0";
  for (const ToolkitPin& pin : ToolkitPins()) {
    SCOPED_TRACE(pin.release);
    EXPECT_TRUE(releases.insert(pin.release).second) << "pinned twice";
    EXPECT_EQ(ParseDottedVersion(pin.release)->size(), 3u);
    EXPECT_EQ(*CompareDottedVersions(previous, pin.release), -1);
    previous = pin.release;
    EXPECT_THAT(pin.source, ::testing::StartsWith("cuda-toolkit "));
    std::set<std::string> packages;
    for (const PinnedWheel& w : pin.wheels) {
      packages.insert(w.package);
      EXPECT_TRUE(ParseDottedVersion(w.version).ok()) << w.package << " " << w.version;
    }
    EXPECT_EQ(packages, (std::set<std::string>{"nvidia-cuda-nvcc", "nvidia-nvvm", "nvidia-cuda-crt",
                                               "nvidia-cuda-runtime", "nvidia-cuda-cccl"}));
    // Every release offers the same libraries, each an exact version of its own wheel.
    ASSERT_EQ(pin.libraries.size(), 1u);
    const PinnedWheel& cublas = pin.libraries.at("cublas");
    EXPECT_EQ(cublas.package, "nvidia-cublas");
    EXPECT_EQ(ParseDottedVersion(cublas.version)->size(), 4u) << cublas.version;
  }
  EXPECT_EQ(ToolkitLibraryNames(), "cublas");
}

TEST(ToolkitPinsTest, TheReleasesCheckedByHandAreThere) {
  const ToolkitPin* pin = FindToolkitPin("13.0.88");
  ASSERT_NE(pin, nullptr);
  EXPECT_THAT(pin->wheels, ::testing::Contains(::testing::AllOf(
                               ::testing::Field(&PinnedWheel::package, "nvidia-cuda-runtime"),
                               ::testing::Field(&PinnedWheel::version, "13.0.96"))));
  EXPECT_NE(FindToolkitPin("13.2.86"), nullptr);
  EXPECT_EQ(FindToolkitPin("13.0"), nullptr);
  EXPECT_EQ(FindToolkitPin("12.9.86"), nullptr) << "12.x wheels carry no nvcc";
  EXPECT_THAT(PinnedReleases(), ::testing::HasSubstr("13.0.88, "));
}

TEST(ToolkitPinsTest, PlatformTagsAndWheelFolder) {
  EXPECT_EQ(ToolkitPlatformTag("x86_64"), "manylinux2014_x86_64");
  EXPECT_EQ(ToolkitPlatformTag("aarch64"), "manylinux2014_aarch64");
  EXPECT_EQ(ToolkitPlatformTag("ppc64le"), "");
  EXPECT_EQ(ToolkitWheelFolder("13.2.86"), "nvidia/cu13/");
  // cuBLAS 13.1.0.3 (CUDA 13.0.2's) is on PyPI as manylinux_2_27 only.
  EXPECT_EQ(WheelPlatformTag(FindToolkitPin("13.0.88")->libraries.at("cublas"), "aarch64"),
            "manylinux_2_27_aarch64");
  // 13.10.0.20 (CUDA 13.5.0's) as manylinux2014.
  EXPECT_EQ(WheelPlatformTag(FindToolkitPin("13.5.37")->libraries.at("cublas"), "x86_64"),
            "manylinux2014_x86_64");
  EXPECT_EQ(WheelPlatformTag(FindToolkitPin("13.0.88")->wheels.front(), "x86_64"),
            "manylinux2014_x86_64");
}

}  // namespace
}  // namespace farm
