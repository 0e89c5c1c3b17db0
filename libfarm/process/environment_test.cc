#include "libfarm/process/environment.h"

#include <stdlib.h>

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(EnvironmentTest, UnsetAndEmptyReadAsEmptyAndTakeTheFallback) {
  constexpr const char* kName = "FARM_ENVIRONMENT_TEST_VARIABLE";
  ::unsetenv(kName);
  EXPECT_EQ(GetEnv(kName), "");
  EXPECT_EQ(GetEnvOr(kName, "fallback"), "fallback");
  ::setenv(kName, "", 1);
  EXPECT_EQ(GetEnv(kName), "");
  EXPECT_EQ(GetEnvOr(kName, "fallback"), "fallback");
  ::setenv(kName, "value", 1);
  EXPECT_EQ(GetEnv(kName), "value");
  EXPECT_EQ(GetEnvOr(kName, "fallback"), "value");
  ::unsetenv(kName);
}

}  // namespace
}  // namespace farm
