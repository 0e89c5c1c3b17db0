#include "libfarm/files/relative_path.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(RelativePathTest, AcceptsPlainRelativePaths) {
  EXPECT_TRUE(ValidateRelativePath("k.cu").ok());
  EXPECT_TRUE(ValidateRelativePath("out/sm_90/k.cubin").ok());
  EXPECT_TRUE(ValidateRelativePath("a..b/c").ok());
}

TEST(RelativePathTest, RefusesEscapes) {
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../../x", "a/..", "a//b", "./a", "a/"}) {
    absl::Status s = ValidateRelativePath(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ValidateRelativePath(std::string("a\0b", 3)).ok());
}

}  // namespace
}  // namespace farm
