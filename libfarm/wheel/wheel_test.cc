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

// Wheel names come from builds and uploads and reach paths, pages and publish hooks: any
// character outside the format's is refused, naming the file and the rule (issue 24).
TEST(WheelFilenameTest, RefusesNamesOutsideTheWheelFormatNamingTheFileAndTheRule) {
  const struct {
    std::string name;
    std::string rule;
  } kBad[] = {
      {"probe_pkg-1.0.0$(id>PWNED)-py3-none-linux_x86_64.whl", "is not a PEP 440 version"},
      {"probe_pkg-1.0.0`id`-py3-none-linux_x86_64.whl", "is not a PEP 440 version"},
      {"probe pkg-1.0-py3-none-any.whl", "the distribution name \"probe pkg\" may hold only"},
      {"probe_pkg-1.0 -py3-none-any.whl", "is not a PEP 440 version"},
      {"probe\"pkg-1.0-py3-none-any.whl", "the distribution name"},
      {"probe'pkg-1.0-py3-none-any.whl", "the distribution name"},
      {"probe;id-1.0-py3-none-any.whl", "the distribution name"},
      {"probe_pkg-1.0-py3-none-any;id.whl", "the platform tag set"},
      {"probe_pkg-1.0-py3-none\nid-any.whl", "the abi tag set \"none\\nid\""},
      {"probe_pkg-1.0-py3$IFS-none-any.whl", "the python tag set"},
      {"pr\xc3\xb6"
       "be-1.0-py3-none-any.whl",
       "wheel file name \"pr\\xc3\\xb6"},
      {"probe_pkg-1.0-py2..py3-none-any.whl", "the python tag set \"py2..py3\" must be tags"},
      {"_probe-1.0-py3-none-any.whl", "must begin and end with a letter or digit"},
      {"probe-1.0-x1-py3-none-any.whl", "the build tag \"x1\" must start with a digit"},
      {"probe-1.0-1$x-py3-none-any.whl", "the build tag"},
      {"-1.0-py3-none-any.whl", "a part between dashes is empty"},
      {"probe--py3-none-any.whl", "a part between dashes is empty"},
      {"probe-1.0-py3-none-.whl", "a part between dashes is empty"},
      {"probe-1.0-py3-none-any.zip", "no .whl suffix"},
      {std::string(300, 'a') + "-1.0-py3-none-any.whl", "longer than 255 bytes"},
  };
  for (const auto& [name, rule] : kBad) {
    auto parsed = ParseWheelFilename(name);
    ASSERT_FALSE(parsed.ok()) << name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_NE(parsed.status().message().find(rule), std::string::npos)
        << name << ": " << parsed.status().message();
    EXPECT_NE(parsed.status().message().find("wheel file name \""), std::string::npos)
        << parsed.status().message();
    // Quoted escaped: no control or non-ASCII byte of the name reaches a message.
    for (char c : parsed.status().message()) {
      EXPECT_TRUE(c >= 0x20 && c < 0x7f) << name << ": " << parsed.status().message();
    }
  }
}

TEST(WheelFilenameTest, AcceptsRealWheelNames) {
  for (const char* good :
       {"torch-2.9.1+cu130-cp312-cp312-manylinux_2_28_aarch64.whl",
        "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl",
        "demo_cuda_ext-0.1.0-1-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_aarch64.whl",
        "zope.interface-6.0-cp311-cp311-linux_x86_64.whl", "six-1.16.0-py2.py3-none-any.whl",
        "Probe_OK-v2.00-PY3-none-Any.whl", "pkg-1!2.0rc1.post2.dev3+ubuntu.1-py3-none-any.whl",
        "pkg-1.0-20240101_abc-py3-none-any.whl"}) {
    EXPECT_TRUE(ParseWheelFilename(good).ok()) << good << ": " << ParseWheelFilename(good).status();
  }
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
