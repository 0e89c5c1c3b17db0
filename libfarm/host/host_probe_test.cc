#include "libfarm/host/host_probe.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(HostProbeTest, ReportsThisMachine) {
  HostInfo info = ProbeHost();
  EXPECT_EQ(info.os, "linux");
  EXPECT_TRUE(info.cpu_arch == "x86_64" || info.cpu_arch == "aarch64") << info.cpu_arch;
  EXPECT_TRUE(info.glibc.starts_with("2.")) << info.glibc;
  EXPECT_GE(info.cores, 1u);
  EXPECT_GT(info.ram_bytes, 0u);
}

TEST(HostProbeTest, FreeDiskOfExistingAndMissingPaths) {
  auto free = FreeDiskBytes("/");
  ASSERT_TRUE(free.ok());
  EXPECT_GT(*free, 0u);
  EXPECT_FALSE(FreeDiskBytes("/nonexistent/dir").ok());
}

TEST(HostProbeTest, DefaultSlotsFollowsFourGiBPerJob) {
  constexpr uint64_t kGiB = 1ULL << 30;
  EXPECT_EQ(DefaultSlots(32, 128 * kGiB), 32u);  // m8g.8xlarge: RAM allows 32
  EXPECT_EQ(DefaultSlots(32, 64 * kGiB), 16u);   // RAM-bound
  EXPECT_EQ(DefaultSlots(2, 24 * kGiB), 2u);     // core-bound
  EXPECT_EQ(DefaultSlots(8, 2 * kGiB), 1u);      // never zero
}

}  // namespace
}  // namespace farm
