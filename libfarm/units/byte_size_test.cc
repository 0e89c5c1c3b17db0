#include "libfarm/units/byte_size.h"

#include <gtest/gtest.h>

namespace farm {
namespace {

TEST(ByteSizeTest, ParsesBinaryUnits) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("512MiB"), 512ull << 20);
  EXPECT_EQ(*ParseByteSize("20GiB"), 20ull << 30);
  EXPECT_EQ(*ParseByteSize("20G"), 20ull << 30);
  EXPECT_EQ(*ParseByteSize("1.5 GB"), 3ull << 29);
  EXPECT_EQ(*ParseByteSize("2tib"), 2ull << 40);
  EXPECT_EQ(*ParseByteSize("10k"), 10240u);
}

TEST(ByteSizeTest, RefusesGarbageWithTheExpectedForm) {
  for (const char* bad : {"", "GiB", "-1GiB", "12 parsecs", "1e3", "99999999999TiB"}) {
    auto r = ParseByteSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("20GiB"), absl::string_view::npos);
  }
}

TEST(ByteSizeTest, Formats) {
  EXPECT_EQ(FormatByteSize(17), "17 B");
  EXPECT_EQ(FormatByteSize(3ull << 29), "1.5 GiB");
}

}  // namespace
}  // namespace farm
