#include "coordinator/call_admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "libfarm/rpc/retry.h"

namespace farm::coordinator {
namespace {

using ::testing::HasSubstr;

// 12 long polls at once; one token alone takes half, and each token its fair share of those
// who want places: a token refused lately counts, so places others give back go to it.
TEST(CallAdmissionTest, TokensShareTheWaitsAndOneThatCameLaterIsServedAsOthersEnd) {
  MetricsRegistry metrics;
  CallAdmission admission(12, &metrics);
  EXPECT_EQ(admission.max_waiting(), 12);
  EXPECT_EQ(admission.max_waiting_per_caller(), 6);
  std::vector<CallAdmission::Ticket> a, b;
  for (int i = 0; i < 6; ++i) {
    auto t = admission.AdmitLongPoll("build-a");
    ASSERT_TRUE(t.ok()) << t.status();
    a.push_back(*std::move(t));
  }
  auto refused = admission.AdmitLongPoll("build-a");
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(IsCoordinatorBusy(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("this token holds 6 waiting calls"));
  for (int i = 0; i < 6; ++i) {
    auto t = admission.AdmitLongPoll("build-b");
    ASSERT_TRUE(t.ok()) << t.status();
    b.push_back(*std::move(t));
  }
  EXPECT_EQ(admission.waiting(), 12);
  // build-c finds every place taken, and is remembered.
  auto full = admission.AdmitLongPoll("build-c");
  ASSERT_FALSE(full.ok());
  EXPECT_THAT(full.status().message(), HasSubstr("12 calls are waiting, its limit"));
  EXPECT_THAT(metrics.Render(), HasSubstr("farm_rpc_busy_total 2"));
  EXPECT_THAT(metrics.Render(), HasSubstr("farm_rpc_waiting_calls 12"));
  // build-a's waits end: its share is now 12 / 3 = 4, so it may not take them back...
  a.pop_back();
  a.pop_back();
  auto again = admission.AdmitLongPoll("build-a");
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("(3 tokens want places)"));
  // ...and build-c gets them.
  std::vector<CallAdmission::Ticket> c;
  for (int i = 0; i < 2; ++i) {
    auto t = admission.AdmitLongPoll("build-c");
    ASSERT_TRUE(t.ok()) << t.status();
    c.push_back(*std::move(t));
  }
  a.clear();
  b.clear();
  c.clear();
  EXPECT_EQ(admission.waiting(), 0);
}

TEST(CallAdmissionTest, TheSmallestServerStillTakesOneWait) {
  CallAdmission admission(1, nullptr);
  auto t = admission.AdmitLongPoll("farm");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(admission.AdmitLongPoll("farm").ok());
}

}  // namespace
}  // namespace farm::coordinator
