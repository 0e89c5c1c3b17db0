#include "libfarm/rpc/backoff.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(BackoffTest, GrowsToMaxAndResets) {
  Backoff b(absl::Milliseconds(100), absl::Seconds(1), 2.0, 0.0);
  EXPECT_EQ(b.Next(), absl::Milliseconds(100));
  EXPECT_EQ(b.Next(), absl::Milliseconds(200));
  EXPECT_EQ(b.Next(), absl::Milliseconds(400));
  EXPECT_EQ(b.Next(), absl::Milliseconds(800));
  EXPECT_EQ(b.Next(), absl::Seconds(1));
  EXPECT_EQ(b.Next(), absl::Seconds(1));
  b.Reset();
  EXPECT_EQ(b.Next(), absl::Milliseconds(100));
}

TEST(BackoffTest, JitterStaysInBounds) {
  Backoff b(absl::Seconds(1), absl::Seconds(10), 1.0, 0.2);
  for (int i = 0; i < 100; ++i) {
    absl::Duration d = b.Next();
    EXPECT_GE(d, absl::Milliseconds(800));
    EXPECT_LE(d, absl::Milliseconds(1200));
  }
}

}  // namespace
}  // namespace farm
