#include "libfarm/digest/digest.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "libfarm/digest/sha256.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

constexpr char kEmpty[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr char kAbc[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(DigestTest, KnownVectors) {
  EXPECT_EQ(DigestOfBytes("").hash(), kEmpty);
  EXPECT_EQ(DigestOfBytes("abc").hash(), kAbc);
  EXPECT_EQ(DigestOfBytes("abc").size_bytes(), 3);
  Sha256 split;
  split.Update("a");
  split.Update("");
  split.Update("bc");
  EXPECT_EQ(split.FinishHex(), kAbc);
}

TEST(DigestTest, WordsHashAsTheirLengthsAndBytesAndNoTwoSplitsAlike) {
  auto words = [](std::initializer_list<absl::string_view> list) {
    Sha256 hash;
    for (absl::string_view word : list) hash.UpdateWord(word);
    return hash.FinishHex();
  };
  EXPECT_EQ(words({"ab", "c"}), DigestOfBytes("2:ab1:c").hash());
  EXPECT_NE(words({"ab", "c"}), words({"a", "bc"}));
  EXPECT_NE(words({"", "x"}), words({"x", ""}));
}

TEST(DigestTest, FileDigestMatchesBytesAcrossChunks) {
  const fs::path p = fs::temp_directory_path() / ("digest_test_" + std::to_string(::getpid()));
  std::string data(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31 + (i >> 12));
  std::ofstream(p, std::ios::binary) << data;
  auto d = DigestOfFile(p.string());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(SameDigest(*d, DigestOfBytes(data)));
  fs::remove(p);
  EXPECT_EQ(DigestOfFile(p.string()).status().code(), absl::StatusCode::kNotFound);
}

TEST(DigestTest, ParseAndFormat) {
  auto d = ParseDigest(std::string(kAbc) + "/3");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->size_bytes(), 3);
  EXPECT_EQ(DigestToString(*d), std::string(kAbc) + "/3");
  auto bare = ParseDigest(kAbc);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->size_bytes(), -1);
}

TEST(DigestTest, RefusesMalformedDigestsNamingTheForm) {
  const std::string upper = "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD";
  for (const std::string& bad :
       {std::string(""), std::string("abc"), upper, std::string(kAbc) + "/",
        std::string(kAbc) + "/-1", std::string(kAbc) + "/x", std::string("../") + kAbc,
        std::string(kAbc).substr(0, 62) + "/."}) {
    auto d = ParseDigest(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_NE(d.status().message().find("HASH/SIZE"), absl::string_view::npos);
  }
  farm::v1::Digest neg;
  neg.set_hash(kAbc);
  neg.set_size_bytes(-1);
  EXPECT_FALSE(ValidateDigest(neg).ok());
  neg.set_hash("../../etc/passwd");
  EXPECT_FALSE(ValidateHash(neg.hash()).ok());
}

}  // namespace
}  // namespace farm
