#include "coordinator/scheduler/action_key.h"

#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

farm::v1::Action DeviceCompile(const std::string& release) {
  farm::v1::Action a;
  a.add_argv("/bin/sh");
  a.add_argv("-c");
  a.add_argv("\"$FARM_CUDA_ROOT\"/nvvm/bin/cicc k.cpp1.ii -o k.ptx");
  a.add_output_paths("k.ptx");
  a.mutable_requirements()->set_os("linux");
  a.mutable_requirements()->set_cuda_version("13.0");
  a.mutable_requirements()->set_cuda_release(release);
  a.mutable_requirements()->add_sms("sm_90");
  return a;
}

TEST(ActionKeyTest, TheToolkitReleaseIsPartOfTheKey) {
  EXPECT_EQ(ActionKey(DeviceCompile("13.0.88")), ActionKey(DeviceCompile("13.0.88")));
  EXPECT_NE(ActionKey(DeviceCompile("13.0.88")), ActionKey(DeviceCompile("13.0.96")));
  EXPECT_NE(ActionKey(DeviceCompile("13.0.88")), ActionKey(DeviceCompile("")));
}

// Keys of actions without a release are what they were before the field existed: the
// action cache of an upgraded coordinator still answers them.
TEST(ActionKeyTest, NoReleaseKeepsTheEarlierKey) {
  farm::v1::Action a;
  a.add_argv("true");
  EXPECT_EQ(ActionKey(a), "d123b94b978cc1e9af154a848b21db362dea32a6102480fc487c3f89e0e65189");
}

}  // namespace
}  // namespace farm::coordinator
