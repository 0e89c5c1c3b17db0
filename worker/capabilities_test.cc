#include "worker/capabilities.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::worker {
namespace {

TEST(ParseLabelsTest, ParsesPairs) {
  auto labels = ParseLabels("instance=m8g.8xlarge, zone=us-east-1a");
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(labels->at("instance"), "m8g.8xlarge");
  EXPECT_EQ(labels->at("zone"), "us-east-1a");
  EXPECT_TRUE(ParseLabels("")->empty());
}

TEST(ParseLabelsTest, RejectsMalformedWithExample) {
  for (const char* bad : {"novalue", "=x", "a=b=c", "bad key=1"}) {
    auto labels = ParseLabels(bad);
    ASSERT_FALSE(labels.ok()) << bad;
    EXPECT_NE(labels.status().message().find("key=value"), std::string::npos);
  }
}

TEST(DetectCapabilitiesTest, NoneAdvertisesNoToolkit) {
  auto caps = DetectCapabilities({.work_dir = "/tmp", .cuda_paths = {"none"}});
  ASSERT_TRUE(caps.ok()) << caps.status();
  EXPECT_EQ(caps->cuda_size(), 0);
  EXPECT_GE(caps->slots(), 1u);
  EXPECT_FALSE(caps->glibc().empty());
}

TEST(DetectCapabilitiesTest, NamedToolkitThatIsMissingIsAnError) {
  auto caps = DetectCapabilities({.work_dir = "/tmp", .cuda_paths = {"/nonexistent/cuda"}});
  ASSERT_FALSE(caps.ok());
  EXPECT_NE(caps.status().message().find("/nonexistent/cuda"), std::string::npos);
}

TEST(DetectCapabilitiesTest, DiscoversInstalledToolkitAndHonoursOverrides) {
  auto caps =
      DetectCapabilities({.work_dir = "/tmp", .slots = 3, .labels = {{"instance", "m8g.8xlarge"}}});
  ASSERT_TRUE(caps.ok()) << caps.status();
  ASSERT_GE(caps->cuda_size(), 1) << "nvcc must be installed on every Wheelfarm host";
  EXPECT_THAT(caps->cuda(0).sms(), ::testing::Contains("sm_121"));
  EXPECT_EQ(caps->slots(), 3u);
  EXPECT_EQ(caps->labels().at("instance"), "m8g.8xlarge");
}

}  // namespace
}  // namespace farm::worker
