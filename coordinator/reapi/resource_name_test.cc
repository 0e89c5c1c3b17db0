#include "coordinator/reapi/resource_name.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace farm::coordinator::reapi {
namespace {

using ::testing::HasSubstr;

const std::string kHash(64, 'a');
constexpr char kUuid[] = "3f1e2d4c-5b6a-4798-8a9b-0c1d2e3f4a5b";

void ExpectRefused(const absl::StatusOr<BlobResource>& r, const std::string& says) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr(says));
}

TEST(ResourceNameTest, ReadsBlobsOfTheEmptyInstance) {
  auto r = ParseReadResourceName(absl::StrCat("blobs/", kHash, "/42"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->instance_name, "");
  EXPECT_EQ(r->digest.hash(), kHash);
  EXPECT_EQ(r->digest.size_bytes(), 42);
}

TEST(ResourceNameTest, WritesUploadsWithOrWithoutMetadata) {
  for (const char* tail : {"", "/meta", "/meta/more"}) {
    auto r = ParseWriteResourceName(absl::StrCat("uploads/", kUuid, "/blobs/", kHash, "/7", tail));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->digest.hash(), kHash);
    EXPECT_EQ(r->digest.size_bytes(), 7);
  }
}

TEST(ResourceNameTest, RefusesDotDotEmptyAndDotSegments) {
  ExpectRefused(ParseReadResourceName(absl::StrCat("../blobs/", kHash, "/1")), "'..' segment");
  ExpectRefused(ParseReadResourceName(absl::StrCat("blobs/", kHash, "/../1")), "'..' segment");
  ExpectRefused(ParseWriteResourceName(absl::StrCat("uploads/", kUuid, "/blobs/", kHash, "/1/..")),
                "'..' segment");
  ExpectRefused(ParseReadResourceName(absl::StrCat("/blobs/", kHash, "/1")), "empty segment");
  ExpectRefused(ParseReadResourceName(absl::StrCat("./blobs/", kHash, "/1")), "'.' segment");
}

TEST(ResourceNameTest, RefusesOtherDigestFunctionsAndCompressedBlobs) {
  ExpectRefused(ParseReadResourceName(absl::StrCat("blobs/blake3/", kHash, "/1")),
                "names digest function 'blake3': this farm's CAS stores SHA256 digests only");
  ExpectRefused(
      ParseWriteResourceName(absl::StrCat("uploads/", kUuid, "/blobs/sha256tree/", kHash, "/1")),
      "digest function 'sha256tree'");
  ExpectRefused(ParseReadResourceName(absl::StrCat("compressed-blobs/zstd/", kHash, "/1")),
                "compressed-blobs: this farm advertises no compressor");
  ExpectRefused(ParseWriteResourceName(
                    absl::StrCat("uploads/", kUuid, "/compressed-blobs/zstd/", kHash, "/1")),
                "advertises no compressor");
  // A 40-hex SHA-1 hash is no SHA-256.
  ExpectRefused(ParseReadResourceName(absl::StrCat("blobs/", std::string(40, 'b'), "/1")),
                "64 lowercase hex");
}

TEST(ResourceNameTest, RefusesMalformedHashesSizesUuidsAndShapes) {
  ExpectRefused(ParseReadResourceName(absl::StrCat("blobs/", std::string(64, 'A'), "/1")),
                "64 lowercase hex");
  ExpectRefused(ParseReadResourceName(absl::StrCat("blobs/", kHash, "/-1")), "not a decimal");
  ExpectRefused(ParseReadResourceName(absl::StrCat("blobs/", kHash, "/1e3")), "not a decimal");
  ExpectRefused(ParseReadResourceName(absl::StrCat("blobs/", kHash)), "ends before");
  ExpectRefused(ParseReadResourceName(absl::StrCat("blobs/", kHash, "/1/extra")), "goes on after");
  ExpectRefused(ParseReadResourceName(""), "empty segment");
  ExpectRefused(ParseReadResourceName("nothing/here"), "no 'blobs' segment");
  ExpectRefused(ParseWriteResourceName(absl::StrCat("uploads/not-a-uuid/blobs/", kHash, "/1")),
                "not a UUID");
  ExpectRefused(ParseWriteResourceName(absl::StrCat("uploads/", kUuid, "/", kHash, "/1")),
                "not 'blobs'");
  // An upload's name given to Read, and the other way round.
  ExpectRefused(ParseReadResourceName(absl::StrCat("uploads/", kUuid, "/blobs/", kHash, "/1")),
                "'uploads' comes where 'blobs' belongs");
  ExpectRefused(ParseWriteResourceName(absl::StrCat("blobs/", kHash, "/1")),
                "'blobs' comes where 'uploads' belongs");
}

TEST(ResourceNameTest, RefusesInstancesOtherThanTheEmptyOne) {
  ExpectRefused(ParseReadResourceName(absl::StrCat("main/blobs/", kHash, "/1")),
                "unknown instance name 'main'");
}

TEST(ResourceNameTest, EchoesAHostileNameOnlyInPart) {
  const std::string name = absl::StrCat(std::string(5000, 'x'), "/../blobs/", kHash, "/1");
  auto r = ParseReadResourceName(name);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.status().message().size(), 600u);
}

}  // namespace
}  // namespace farm::coordinator::reapi
