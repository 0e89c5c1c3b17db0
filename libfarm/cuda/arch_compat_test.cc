#include "libfarm/cuda/arch_compat.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

CudaTarget T(int sm, ArchVariant v = ArchVariant::kGeneric) { return CudaTarget{sm, v}; }

TEST(ArchCompatTest, SassRunsForwardWithinAMajorOnly) {
  EXPECT_TRUE(SassRunsOn(T(120), 121));
  EXPECT_TRUE(SassRunsOn(T(80), 86));
  EXPECT_TRUE(SassRunsOn(T(80), 89));
  EXPECT_FALSE(SassRunsOn(T(121), 120));  // never backwards
  EXPECT_FALSE(SassRunsOn(T(90), 100));   // never across majors
  EXPECT_FALSE(SassRunsOn(T(100), 110));
  EXPECT_FALSE(SassRunsOn(T(80), 75));
}

TEST(ArchCompatTest, ArchSpecificRunsOnItsSmAndFamilyOnItsFamily) {
  EXPECT_TRUE(SassRunsOn(T(90, ArchVariant::kArchSpecific), 90));
  EXPECT_FALSE(SassRunsOn(T(100, ArchVariant::kArchSpecific), 103));
  EXPECT_FALSE(SassRunsOn(T(120, ArchVariant::kArchSpecific), 121));
  EXPECT_TRUE(SassRunsOn(T(120, ArchVariant::kFamily), 121));
  EXPECT_TRUE(SassRunsOn(T(100, ArchVariant::kFamily), 103));
  EXPECT_FALSE(SassRunsOn(T(100, ArchVariant::kFamily), 110));
}

TEST(ArchCompatTest, PtxJitsOnEveryNewerSm) {
  EXPECT_TRUE(PtxRunsOn(T(80), 121));
  EXPECT_TRUE(PtxRunsOn(T(75), 75));
  EXPECT_FALSE(PtxRunsOn(T(90), 89));
  EXPECT_FALSE(PtxRunsOn(T(90, ArchVariant::kArchSpecific), 100));
}

TEST(ArchCompatTest, BestBuildableIsTheNearestBelowInTheMajor) {
  // flash-attn 2.8.3's FLASH_ATTN_CUDA_ARCHS values.
  const std::vector<CudaTarget> fa = {T(80), T(90), T(100), T(120)};
  EXPECT_EQ(BestBuildableSass(121, fa), T(120));
  EXPECT_EQ(BestBuildableSass(86, fa), T(80));
  EXPECT_EQ(BestBuildableSass(90, fa), T(90));
  EXPECT_EQ(BestBuildableSass(103, fa), T(100));
  EXPECT_EQ(BestBuildableSass(75, fa), std::nullopt);
  EXPECT_EQ(BestBuildableSass(110, fa), std::nullopt);
  EXPECT_EQ(BestBuildableSass(90, {T(90, ArchVariant::kArchSpecific), T(90)}), T(90));
}

TEST(ArchCompatTest, RoutesSayHowEachRequestRuns) {
  EXPECT_EQ((ArchRoute{{T(121), false}, {T(120), false}}).Describe(), "12.1: runs via sm_120 SASS");
  EXPECT_EQ((ArchRoute{{T(90), false}, {T(90), false}}).Describe(), "9.0: sm_90 SASS");
  EXPECT_EQ((ArchRoute{{T(80), true}, {T(80), true}}).Describe(),
            "8.0+PTX: sm_80 SASS + compute_80 PTX");
}

}  // namespace
}  // namespace farm
