#include "coordinator/index/release_file_key.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

std::string Key(const std::string& filename) {
  auto parsed = ParseWheelFilename(filename);
  EXPECT_TRUE(parsed.ok()) << filename << ": " << parsed.status();
  if (!parsed.ok()) return "";
  auto key = ReleaseFileKey(*parsed);
  EXPECT_TRUE(key.ok()) << filename << ": " << key.status();
  return key.ok() ? *key : "";
}

TEST(ReleaseFileKeyTest, SpellingsPipReadsAsOneFileShareAKey) {
  const std::string published = Key("probe_ok-2.0-py3-none-any.whl");
  for (const char* same : {"Probe_OK-2.0-py3-none-any.whl", "probe_ok-2.0-PY3-none-any.whl",
                           "probe_ok-2.0.0-py3-none-any.whl", "probe.ok-v2.00-py3-NONE-Any.whl",
                           "probe__ok-2-py3-none-any.whl"}) {
    EXPECT_EQ(Key(same), published) << same;
  }
  EXPECT_EQ(Key("p-1.0-py2.py3-none-any.whl"), Key("p-1.0-py3.py2-none-any.whl"));
  EXPECT_EQ(Key("p-1.0rc1-py3-none-any.whl"), Key("p-1.0.0RC1-py3-none-any.whl"));
}

TEST(ReleaseFileKeyTest, OtherReleasesBuildsAndTagsAreOtherFiles) {
  const std::string published = Key("probe_ok-2.0-py3-none-any.whl");
  for (const char* other :
       {"probe_ok-2.0.1-py3-none-any.whl", "probe_ok-2.0-1-py3-none-any.whl",
        "probe_ok-2.0-py2.py3-none-any.whl", "probe_ok-2.0+cu126-py3-none-any.whl",
        "probe_ok-2.0.post1-py3-none-any.whl", "probe_ok-2.0-cp312-cp312-manylinux_2_35_x86_64.whl",
        "probe_oke-2.0-py3-none-any.whl"}) {
    EXPECT_NE(Key(other), published) << other;
  }
}

TEST(ReleaseFileKeyTest, RefusesAVersionThatIsNotPep440) {
  // ParseWheelFilename refuses such a name now; a record stored before it may hold one.
  EXPECT_FALSE(ParseWheelFilename("probe_ok-2.0_foo_bar-py3-none-any.whl").ok());
  WheelFilename parsed{.distribution = "probe_ok",
                       .version = "2.0_foo_bar",
                       .python_tags = {"py3"},
                       .abi_tags = {"none"},
                       .platform_tags = {"any"}};
  auto key = ReleaseFileKey(parsed);
  EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(key.status().message(), ::testing::HasSubstr("PEP 440"));
}

}  // namespace
}  // namespace farm::coordinator
