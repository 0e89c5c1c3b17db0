#include "libfarm/versions/pep440_version.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

std::string Normal(absl::string_view text) {
  auto v = ParsePep440Version(text);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status();
  return v.ok() ? v->Normalized() : "";
}

std::string Canon(absl::string_view text) {
  auto v = ParsePep440Version(text);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status();
  return v.ok() ? v->Canonical() : "";
}

// The cases from PEP 440's "Normalization" section and packaging's test suite.
TEST(Pep440VersionTest, NormalizesAsPep440Says) {
  EXPECT_EQ(Normal("2.0"), "2.0");
  EXPECT_EQ(Normal("v2.0"), "2.0");
  EXPECT_EQ(Normal(" 2.0\n"), "2.0");
  EXPECT_EQ(Normal("2.00.010"), "2.0.10");
  EXPECT_EQ(Normal("1.0-ALPHA_1"), "1.0a1");
  EXPECT_EQ(Normal("1.0beta"), "1.0b0");
  EXPECT_EQ(Normal("1.0c2"), "1.0rc2");
  EXPECT_EQ(Normal("1.0.preview.3"), "1.0rc3");
  EXPECT_EQ(Normal("1.0-1"), "1.0.post1");
  EXPECT_EQ(Normal("1.0.rev"), "1.0.post0");
  EXPECT_EQ(Normal("1.0r_4"), "1.0.post4");
  EXPECT_EQ(Normal("1.0-dev"), "1.0.dev0");
  EXPECT_EQ(Normal("0!1.0"), "1.0");
  EXPECT_EQ(Normal("01!1.0RC1.POST2.DEV3+Ubuntu-01_x"), "1!1.0rc1.post2.dev3+ubuntu.1.x");
  EXPECT_EQ(Normal("2.9.1+CU130"), "2.9.1+cu130");
  EXPECT_EQ(Normal("20240101.000001"), "20240101.1");
  EXPECT_EQ(Normal("99999999999999999999999.1"), "99999999999999999999999.1");
}

TEST(Pep440VersionTest, CanonicalFormDropsTrailingReleaseZeros) {
  EXPECT_EQ(Canon("2.0"), "2");
  EXPECT_EQ(Canon("2.0.0"), "2");
  EXPECT_EQ(Canon("2"), "2");
  EXPECT_EQ(Canon("0.0"), "0");
  EXPECT_EQ(Canon("1.0.0rc1"), "1rc1");
  EXPECT_EQ(Canon("1.10.0+cu126"), "1.10+cu126");
  EXPECT_EQ(Canon("1!2.0.0.post0"), "1!2.post0");
  EXPECT_NE(Canon("2.0.1"), Canon("2.0"));
  EXPECT_NE(Canon("2.0+local"), Canon("2.0"));
}

TEST(Pep440VersionTest, RefusesWhatIsNotAVersion) {
  for (const char* bad : {"", "x", "1.0-foo", "1..0", "1.0+", "1.0+a..b", "1.0.", "1.0 2",
                          "1.0a1a2", "1.0-1-1", "\xc2\xb2"}) {
    auto v = ParsePep440Version(bad);
    EXPECT_FALSE(v.ok()) << bad;
    if (!v.ok()) {
      EXPECT_THAT(v.status().message(), HasSubstr("Fix:"));
    }
  }
}

}  // namespace
}  // namespace farm
