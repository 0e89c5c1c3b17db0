#include "worker/disk_claims.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

namespace farm::worker {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(DiskClaimsTest, ClaimsShareTheFreeSpaceAndKeepTheReserve) {
  std::atomic<uint64_t> free{1000 * kMiB};
  DiskClaims claims("/scratch", 200 * kMiB,
                    [&](const std::string&) -> absl::StatusOr<uint64_t> { return free.load(); });
  auto a = claims.Take(500 * kMiB);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(claims.claimed_bytes(), 500 * kMiB);
  // 1000 free, 500 claimed, 200 kept: 300 more fit, 301 do not.
  auto refused = claims.Take(301 * kMiB);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("301.0 MiB"), HasSubstr("500.0 MiB"), HasSubstr("200.0 MiB"),
                    HasSubstr("--disk-reserve"), HasSubstr("Fix:")));
  auto b = claims.Take(300 * kMiB);
  ASSERT_TRUE(b.ok());
  { DiskClaims::Claim gone = *std::move(b); }
  EXPECT_EQ(claims.claimed_bytes(), 500 * kMiB);
  *a = DiskClaims::Claim();
  EXPECT_EQ(claims.claimed_bytes(), 0u);
  free = 100 * kMiB;
  EXPECT_FALSE(claims.Take(0).ok());  // the reserve is already eaten
  EXPECT_EQ(claims.HeadroomBytes(), -100 * static_cast<int64_t>(kMiB));
}

}  // namespace
}  // namespace farm::worker
