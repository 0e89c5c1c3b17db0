#include "libfarm/launcher/fallback_reason.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(FallbackReasonTest, AStatusCarriesItsCodeWhateverItsText) {
  const absl::Status status = WithFallbackReason(
      absl::FailedPreconditionError("the farm's compile"), farm::v1::FALLBACK_REASON_NO_WORKER);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "the farm's compile");
  EXPECT_EQ(FallbackReasonOf(status, farm::v1::FALLBACK_REASON_FARM_ERROR),
            farm::v1::FALLBACK_REASON_NO_WORKER);
}

TEST(FallbackReasonTest, AStatusWithoutACodeTakesTheCallersDefault) {
  EXPECT_EQ(FallbackReasonOf(absl::UnavailableError("no worker is online"),
                             farm::v1::FALLBACK_REASON_FARM_ERROR),
            farm::v1::FALLBACK_REASON_FARM_ERROR);
  EXPECT_TRUE(WithFallbackReason(absl::OkStatus(), farm::v1::FALLBACK_REASON_INPUTS).ok());
}

}  // namespace
}  // namespace farm
