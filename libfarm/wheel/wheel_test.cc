#include <gtest/gtest.h>

#include "libfarm/wheel/record_file.h"
#include "libfarm/wheel/wheel_filename.h"
#include "libfarm/wheel/wheel_metadata.h"

namespace farm {
namespace {

TEST(WheelFilenameTest, ParsesLocalVersionsBuildTagsAndTagSets) {
  auto torch = ParseWheelFilename("/dist/torch-2.9.1+cu130-cp310-cp310-manylinux_2_35_aarch64.whl");
  ASSERT_TRUE(torch.ok()) << torch.status();
  EXPECT_EQ(torch->distribution, "torch");
  EXPECT_EQ(torch->version, "2.9.1+cu130");
  EXPECT_EQ(torch->build_tag, "");
  EXPECT_EQ(torch->ExpandedTags(), std::vector<std::string>{"cp310-cp310-manylinux_2_35_aarch64"});

  auto multi = ParseWheelFilename("demo_pkg-1.0+cu126-1-py2.py3-none-any.whl");
  ASSERT_TRUE(multi.ok()) << multi.status();
  EXPECT_EQ(multi->build_tag, "1");
  EXPECT_EQ(multi->ExpandedTags(), (std::vector<std::string>{"py2-none-any", "py3-none-any"}));

  for (const char* bad : {"demo.tar.gz", "demo-1.0.whl", "demo-1.0-x-py3-none-any.whl",
                          "demo-1.0--none-any.whl", "a-b-c-d-e-f-g.whl"}) {
    EXPECT_FALSE(ParseWheelFilename(bad).ok()) << bad;
  }
  EXPECT_EQ(NormalizeDistributionName("Demo.Pkg--x"), "demo_pkg_x");
}

TEST(WheelFilenameTest, PlatformTags) {
  const PlatformTag modern = ParsePlatformTag("manylinux_2_35_x86_64");
  EXPECT_EQ(modern.kind, PlatformTag::Kind::kManylinux);
  EXPECT_EQ(modern.glibc_minor, 35);
  EXPECT_EQ(modern.cpu, "x86_64");
  const PlatformTag legacy = ParsePlatformTag("manylinux2014_aarch64");
  EXPECT_EQ(legacy.glibc_minor, 17);
  EXPECT_EQ(legacy.cpu, "aarch64");
  EXPECT_EQ(ParsePlatformTag("manylinux1_x86_64").glibc_minor, 5);
  EXPECT_EQ(ParsePlatformTag("musllinux_1_2_x86_64").kind, PlatformTag::Kind::kMusllinux);
  EXPECT_EQ(ParsePlatformTag("linux_x86_64").kind, PlatformTag::Kind::kLinux);
  EXPECT_EQ(ParsePlatformTag("any").kind, PlatformTag::Kind::kAny);
  EXPECT_EQ(ParsePlatformTag("win_amd64").kind, PlatformTag::Kind::kOther);
}

TEST(RecordTest, ParsesCsvAndHashesLikePip) {
  auto rows = ParseRecord(
      "demo_pkg/__init__.py,sha256=Ccv1rhOmQ6mwI9oQNcYMUBhzHV2WM6htYbGbTj86p-s,11\n"
      "\"odd,name.py\",sha256=abc,3\r\n"
      "demo_pkg-1.0.dist-info/RECORD,,\n");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].size, 11u);
  EXPECT_EQ((*rows)[1].path, "odd,name.py");
  EXPECT_EQ((*rows)[2].hash, "");
  EXPECT_EQ((*rows)[2].size, std::nullopt);
  EXPECT_FALSE(ParseRecord("a,b\n").ok());
  EXPECT_FALSE(ParseRecord("a,b,notanumber\n").ok());
  EXPECT_FALSE(ParseRecord("\"unterminated,b,1\n").ok());
  // python3 -c 'import hashlib,base64; print(base64.urlsafe_b64encode(
  //   hashlib.sha256(b"hello").digest()).rstrip(b"="))'
  EXPECT_EQ(RecordSha256(AsBytes("hello")), "sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ");
  // The same from the hex a streaming hash gives (sha256 of "hello").
  EXPECT_EQ(RecordSha256FromHex("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"),
            "sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ");
  EXPECT_EQ(RecordSha256FromHex("2cf24d"), "");
  EXPECT_EQ(RecordSha256FromHex(std::string(64, 'g')), "");
}

TEST(WheelMetadataTest, ParsesTagsAndPurelib) {
  auto metadata = ParseWheelMetadata(
      "Wheel-Version: 1.0\nGenerator: bdist_wheel 1.0\nRoot-Is-Purelib: false\n"
      "Tag: cp311-cp311-manylinux_2_35_x86_64\nTag: cp311-cp311-manylinux_2_36_x86_64\nBuild: 1\n");
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  EXPECT_EQ(metadata->wheel_version, "1.0");
  EXPECT_EQ(metadata->root_is_purelib, false);
  EXPECT_EQ(metadata->tags.size(), 2u);
  EXPECT_EQ(metadata->build, "1");
  EXPECT_FALSE(ParseWheelMetadata("Generator: x\n").ok());
  EXPECT_FALSE(ParseWheelMetadata("Wheel-Version: 1.0\ngarbage\n").ok());
}

}  // namespace
}  // namespace farm
