#include "coordinator/http/connection_slots.h"

#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

TEST(ConnectionSlotsTest, BoundsConnectionsPerClientAndOverall) {
  ConnectionSlots slots(HttpLimits{.max_connections = 3, .max_connections_per_client = 2});
  EXPECT_TRUE(slots.Admit("a"));
  EXPECT_TRUE(slots.Admit("a"));
  EXPECT_FALSE(slots.Admit("a"));
  EXPECT_TRUE(slots.Admit("b"));
  EXPECT_FALSE(slots.Admit("c"));
  slots.Release("a");
  EXPECT_TRUE(slots.Admit("c"));
}

// Slow clients may hold half of their own connections and three quarters of all in a
// waiting state; the rest answer requests that arrive at once.
TEST(ConnectionSlotsTest, KeepsConnectionsFreeOfClientsThatWait) {
  const HttpLimits limits{.max_connections = 8, .max_connections_per_client = 4};
  EXPECT_EQ(limits.MaxWaitingPerClient(), 2);
  EXPECT_EQ(limits.MaxWaiting(), 6);
  ConnectionSlots slots(limits);
  for (const char* client : {"a", "b", "c", "d"}) {
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(slots.Admit(client));
  }
  EXPECT_TRUE(slots.StartWaiting("a"));
  EXPECT_TRUE(slots.StartWaiting("a"));
  EXPECT_FALSE(slots.StartWaiting("a")) << "a client waits on at most half of its slots";
  EXPECT_TRUE(slots.StartWaiting("b"));
  EXPECT_TRUE(slots.StartWaiting("b"));
  EXPECT_TRUE(slots.StartWaiting("c"));
  EXPECT_TRUE(slots.StartWaiting("c"));
  EXPECT_FALSE(slots.StartWaiting("d")) << "three quarters of all slots wait at most";
  slots.StopWaiting("a");
  EXPECT_TRUE(slots.StartWaiting("d"));
  EXPECT_FALSE(slots.StartWaiting("nobody")) << "a client without a connection has nothing to wait";
}

}  // namespace
}  // namespace farm::coordinator
