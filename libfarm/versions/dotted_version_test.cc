#include "libfarm/versions/dotted_version.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(DottedVersionTest, ComparesNumerically) {
  EXPECT_EQ(*CompareDottedVersions("2.35", "2.36"), -1);
  EXPECT_EQ(*CompareDottedVersions("12.9", "12.10"), -1);
  EXPECT_EQ(*CompareDottedVersions("13.0", "12.9"), 1);
  EXPECT_EQ(*CompareDottedVersions("13", "13.0"), 0);
}

TEST(DottedVersionTest, RejectsNonVersions) {
  EXPECT_FALSE(CompareDottedVersions("2.x", "2.3").ok());
  EXPECT_FALSE(ParseDottedVersion("").ok());
  EXPECT_FALSE(ParseDottedVersion("1..2").ok());
}

}  // namespace
}  // namespace farm
