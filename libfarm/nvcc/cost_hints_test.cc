#include "libfarm/nvcc/cost_hints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

TEST(CostHintsTest, TheFirstMatchingGlobGivesTheSeconds) {
  auto hints =
      CostHints::Parse(" *flash_bwd_hdim256* = 900 ; *flash_bwd_*=450;*flash_fwd_*=200.5; ");
  ASSERT_TRUE(hints.ok()) << hints.status();
  EXPECT_EQ(hints->SecondsFor("cuda/flash_attn/flash_bwd_hdim256_fp16_sm80.cu"), 900);
  EXPECT_EQ(hints->SecondsFor("cuda/flash_attn/flash_bwd_hdim64_bf16_sm80.cu"), 450);
  EXPECT_EQ(hints->SecondsFor("flash_attn/kernels/flash_fwd_split.cu"), 200.5);
  EXPECT_EQ(hints->SecondsFor("native/cuda/Sort.cu"), std::nullopt);
  auto none = CostHints::Parse("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(CostHintsTest, RefusesWhatIsNotAHintNamingIt) {
  for (const char* bad :
       {"*.cu", "=5", "*.cu=", "*.cu=x", "*.cu=-1", "*.cu=nan", "*.cu=86401", "a=1;b"}) {
    auto hints = CostHints::Parse(bad);
    EXPECT_EQ(hints.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(hints.status().message(), HasSubstr("is not GLOB=SECONDS")) << bad;
  }
  std::string many;
  for (size_t i = 0; i <= kMaxCostHints; ++i) many += "*" + std::to_string(i) + "=1;";
  EXPECT_THAT(CostHints::Parse(many).status().message(), HasSubstr("more than 256"));
  EXPECT_FALSE(CostHints::Parse(std::string(kMaxCostHintGlobBytes + 1, 'a') + "=1").ok());
}

}  // namespace
}  // namespace farm
