#include "worker/build_host_environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::worker {
namespace {

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// Issue 24: a secret in the worker's environment reached every build it ran.
TEST(BuildHostEnvironmentTest, OnlyTheAllowListReachesABuild) {
  const char* const worker_env[] = {"PATH=/usr/local/bin:/usr/bin",
                                    "FARM_TEST_SECRET=hunter2",
                                    "AWS_SECRET_ACCESS_KEY=abc",
                                    "FARM_TOKEN_FILE=/etc/wheelfarm/worker.token",
                                    "FARM_COORDINATOR=10.0.0.5:7420",
                                    "LC_ALL=C.UTF-8",
                                    "LANG=C.UTF-8",
                                    "PIP_INDEX_URL=https://mirror/simple/",
                                    "https_proxy=http://proxy:3128",
                                    "NO_PROXY=localhost",
                                    "FARM_NVCC_LOG=debug",
                                    "TMPDIR=/var/tmp/worker",
                                    "LC_=odd",
                                    "PIP_",
                                    nullptr};
  EXPECT_THAT(
      BuildHostEnvironment(worker_env),
      UnorderedElementsAre(Pair("PATH", "/usr/local/bin:/usr/bin"), Pair("LC_ALL", "C.UTF-8"),
                           Pair("LANG", "C.UTF-8"), Pair("PIP_INDEX_URL", "https://mirror/simple/"),
                           Pair("https_proxy", "http://proxy:3128"), Pair("NO_PROXY", "localhost"),
                           Pair("FARM_NVCC_LOG", "debug")));
  EXPECT_TRUE(BuildHostEnvironment(nullptr).empty());
}

}  // namespace
}  // namespace farm::worker
