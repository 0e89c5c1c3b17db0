#include "libfarm/logging/logger.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"

namespace farm {
namespace {

// Many threads asking for a logger nobody has made yet all get the same one; before the
// registry was locked, two of them could both create it and spdlog threw.
TEST(ComponentLoggerTest, ThreadsRacingForANewLoggerAllGetTheSameOne) {
  for (int round = 0; round < 50; ++round) {
    const std::string name = "race-" + std::to_string(round);
    absl::Notification go;
    std::vector<std::shared_ptr<spdlog::logger>> got(16);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < got.size(); ++i) {
      threads.emplace_back([&, i] {
        go.WaitForNotification();
        got[i] = ComponentLogger(name);
      });
    }
    go.Notify();
    for (std::thread& t : threads) t.join();
    for (const auto& logger : got) {
      ASSERT_NE(logger, nullptr);
      EXPECT_EQ(logger.get(), got[0].get());
      EXPECT_EQ(logger->name(), name);
    }
  }
}

TEST(ComponentLoggerTest, TheLevelFollowsSetLogLevel) {
  ASSERT_TRUE(SetLogLevel("warn"));
  EXPECT_EQ(ComponentLogger("level-check")->level(), spdlog::level::warn);
  EXPECT_FALSE(SetLogLevel("loud"));
  ASSERT_TRUE(SetLogLevel("info"));
}

}  // namespace
}  // namespace farm
