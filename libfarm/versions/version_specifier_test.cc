#include "libfarm/versions/version_specifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

bool Matches(const std::string& spec, const std::string& version) {
  auto s = VersionSpecifier::Parse(spec);
  EXPECT_TRUE(s.ok()) << s.status();
  auto m = s->Matches(version);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

TEST(VersionSpecifierTest, ComparesReleasesNumerically) {
  EXPECT_TRUE(Matches(">=2.27", "2.27.7"));
  EXPECT_TRUE(Matches(">=2.27", "2.27"));
  EXPECT_FALSE(Matches(">=2.27", "2.26.9"));
  EXPECT_TRUE(Matches(">=9.10,<10", "9.13.0.50"));
  EXPECT_FALSE(Matches(">=9.10,<10", "10.0"));
  EXPECT_FALSE(Matches(">=9.10,<10", "9.9.1"));
  EXPECT_TRUE(Matches("==2.27", "2.27.0"));  // zero padding, as PEP 440
  EXPECT_FALSE(Matches("==2.27", "2.27.7"));
  EXPECT_TRUE(Matches("!=2.27.6", "2.27.7"));
  EXPECT_TRUE(Matches(">2.9", "2.10"));
  EXPECT_TRUE(Matches("<=13.0", "13"));
}

TEST(VersionSpecifierTest, PrefixAndCompatibleReleaseClauses) {
  EXPECT_TRUE(Matches("==9.*", "9.13.0.50"));
  EXPECT_FALSE(Matches("==9.*", "10.0"));
  EXPECT_FALSE(Matches("!=9.*", "9.1"));
  EXPECT_TRUE(Matches("~=2.27", "2.31.1"));
  EXPECT_FALSE(Matches("~=2.27", "3.0"));
  EXPECT_TRUE(Matches("~=2.27.5", "2.27.9"));
  EXPECT_FALSE(Matches("~=2.27.5", "2.28.0"));
}

TEST(VersionSpecifierTest, InstalledVersionsCountByTheirRelease) {
  EXPECT_TRUE(Matches("==2.27.7", "2.27.7.post1"));
  EXPECT_TRUE(Matches("==2.27.7", "2.27.7+cu13"));
  EXPECT_TRUE(Matches(">=1.0", "1.0rc1"));
  auto s = VersionSpecifier::Parse(">=1");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->Matches("abc").ok());
  EXPECT_FALSE(s->Matches("1!2.0").ok());
  EXPECT_THAT(ReleaseOf("9.13.0.50").value(), ::testing::ElementsAre(9, 13, 0, 50));
}

TEST(VersionSpecifierTest, RefusesWhatItCannotCheckSayingWhatToWrite) {
  for (const char* bad :
       {"", "2.27", ">=two", ">=2.27.*", "~=2", ">=2.27rc1", "===2.27", ">=2.27,", "> = 2"}) {
    auto s = VersionSpecifier::Parse(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_THAT(s.status().message(), HasSubstr("write clauses like")) << bad;
  }
  EXPECT_EQ(VersionSpecifier::Parse(" >=2.27 , <3 ")->text(), ">=2.27 , <3");
}

}  // namespace
}  // namespace farm
