#include "libfarm/gpu/gpu_probe.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace farm {
namespace {

// This host has no NVIDIA driver (CI has no GPU): the real probe finds none and says why in
// its log, without failing.
TEST(GpuProbeTest, AHostWithoutADriverReportsNoGpus) {
  EXPECT_TRUE(ProbeGpus().empty());
  EXPECT_TRUE(ProbeGpus("/nonexistent/libcuda.so.1").empty());
}

TEST(GpuProbeTest, ReadsEachGpuThroughTheDriverApi) {
  unsetenv("FAKE_CUDA_INIT_RESULT");
  const auto gpus = ProbeGpus(FAKE_LIBCUDA);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].name(), "Fake H100 80GB HBM3");
  EXPECT_EQ(gpus[0].sm(), "sm_90");
  EXPECT_EQ(gpus[0].memory_bytes(), uint64_t{80} << 30);
  EXPECT_EQ(gpus[0].driver_cuda_version(), "13.0");
  EXPECT_FALSE(gpus[0].declared());
  EXPECT_EQ(gpus[1].sm(), "sm_121");
  EXPECT_EQ(gpus[1].name(), "Fake GB10");
}

// The library is there but cuInit fails (CUDA_ERROR_NO_DEVICE = 100): no GPUs, no error.
TEST(GpuProbeTest, AFailingCuInitMeansNoGpus) {
  setenv("FAKE_CUDA_INIT_RESULT", "100", 1);
  EXPECT_TRUE(ProbeGpus(FAKE_LIBCUDA).empty());
  unsetenv("FAKE_CUDA_INIT_RESULT");
}

// A shared library that is not a driver (no cuInit) is no GPU either.
TEST(GpuProbeTest, ALibraryWithoutTheEntryPointsMeansNoGpus) {
  EXPECT_TRUE(ProbeGpus("libm.so.6").empty());
}

}  // namespace
}  // namespace farm
