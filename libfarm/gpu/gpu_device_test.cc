#include "libfarm/gpu/gpu_device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

TEST(GpuDeclarationTest, TakesTheSmAndOptionallyANameAndMemory) {
  auto plain = ParseGpuDeclaration("sm_90");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->sm(), "sm_90");
  EXPECT_TRUE(plain->declared());
  EXPECT_EQ(plain->name(), "");
  EXPECT_EQ(plain->memory_bytes(), 0u);

  auto full = ParseGpuDeclaration("12.1:GB10:128GiB");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->sm(), "sm_121");
  EXPECT_EQ(full->name(), "GB10");
  EXPECT_EQ(full->memory_bytes(), uint64_t{128} << 30);
}

TEST(GpuDeclarationTest, RefusesWhatIsNotAGpuNamingTheValueAndTheFix) {
  for (const char* bad : {"", "sm_99", "sm_90a", "8.0+PTX", "banana", "sm_90:H100:lots"}) {
    auto gpu = ParseGpuDeclaration(bad);
    ASSERT_FALSE(gpu.ok()) << bad;
    EXPECT_THAT(std::string(gpu.status().message()), HasSubstr(std::string("--gpu '") + bad));
    EXPECT_THAT(std::string(gpu.status().message()), HasSubstr("Fix: --gpu SM[:NAME[:MEMORY]]"));
  }
  EXPECT_THAT(std::string(ParseGpuDeclaration("sm_90a").status().message()),
              HasSubstr("a GPU is a plain sm_XY"));
}

TEST(AdvertisedGpusTest, BoundsWhatAWorkerReports) {
  farm::v1::WorkerCapabilities caps;
  auto* gpu = caps.add_gpus();
  gpu->set_sm("sm_90");
  gpu->set_name("NVIDIA H100");
  gpu->set_driver_cuda_version("13.0");
  EXPECT_TRUE(CheckAdvertisedGpus(caps).ok());

  gpu->set_sm("sm_90; rm -rf /");
  EXPECT_THAT(std::string(CheckAdvertisedGpus(caps).message()), HasSubstr("not a known sm_XY"));
  gpu->set_sm("sm_90");
  gpu->set_name(std::string(200, 'x'));
  EXPECT_THAT(std::string(CheckAdvertisedGpus(caps).message()), HasSubstr("at most 128 bytes"));
  gpu->set_name("bell\a");
  EXPECT_FALSE(CheckAdvertisedGpus(caps).ok());
  gpu->set_name("H100");
  gpu->set_driver_cuda_version("13.0-beta");
  EXPECT_THAT(std::string(CheckAdvertisedGpus(caps).message()), HasSubstr("not MAJOR.MINOR"));
  gpu->set_driver_cuda_version("13.0");
  for (int i = 0; i < kMaxWorkerGpus; ++i) *caps.add_gpus() = *gpu;
  EXPECT_THAT(std::string(CheckAdvertisedGpus(caps).message()), HasSubstr("the limit is 64"));
}

TEST(GpuSummaryTest, CountsAlikeGpusAndMarksDeclaredOnes) {
  farm::v1::WorkerCapabilities caps;
  EXPECT_EQ(GpuSummary(caps.gpus()), "-");
  caps.add_gpus()->set_sm("sm_90");
  caps.add_gpus()->set_sm("sm_90");
  auto* declared = caps.add_gpus();
  declared->set_sm("sm_75");
  declared->set_declared(true);
  EXPECT_EQ(GpuSummary(caps.gpus()), "2x sm_90, sm_75 (declared)");
}

}  // namespace
}  // namespace farm
