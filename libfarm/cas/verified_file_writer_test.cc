#include "libfarm/cas/verified_file_writer.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "libfarm/digest/digest.h"
#include "libfarm/digest/sha256.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

constexpr char kAbc[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(VerifiedFileWriterTest, MovesOnlyMatchingBytesIntoPlace) {
  const fs::path dir = fs::temp_directory_path() / ("vfw_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    auto w = VerifiedFileWriter::Create(dir.string());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->Append("ab").ok());
    ASSERT_TRUE(w->Append("c").ok());
    auto d = w->FinishExpecting(DigestOfBytes("abc"));
    ASSERT_TRUE(d.ok()) << d.status();
    ASSERT_TRUE(w->MoveTo((dir / "out").string()).ok());
  }
  EXPECT_EQ(fs::file_size(dir / "out"), 3u);
  {
    auto w = VerifiedFileWriter::Create(dir.string());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->Append("abd").ok());
    auto d = w->FinishExpecting(DigestOfBytes("abc"));
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.status().message().find(std::string(kAbc) + "/3"), absl::string_view::npos);
  }
  // Only the good file remains: the mismatching temp file is gone.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

// Past the write-behind windows (8 MiB) and the cached tail (16 MiB): every byte still
// reaches the file and the digest, whether old windows are dropped from the cache or kept.
TEST(VerifiedFileWriterTest, LargeFilesStreamThroughWithEveryByteIntact) {
  const fs::path dir = fs::temp_directory_path() / ("vfw_large_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string piece(1 << 20, '\0');
  for (bool drop : {false, true}) {
    auto w = VerifiedFileWriter::Create(dir.string());
    ASSERT_TRUE(w.ok());
    if (drop) w->DropBehind();
    Sha256 sha;
    for (int i = 0; i < 41; ++i) {
      for (size_t j = 0; j < piece.size(); j += 64) piece[j] = static_cast<char>(i * 7 + j);
      // Odd sizes too, so windows end mid-append.
      const absl::string_view part(piece.data(), piece.size() - (i % 3) * 4097);
      sha.Update(part);
      ASSERT_TRUE(w->Append(part).ok());
    }
    farm::v1::Digest expected;
    expected.set_hash(sha.FinishHex());
    expected.set_size_bytes(w->bytes_written());
    auto d = w->FinishExpecting(expected);
    ASSERT_TRUE(d.ok()) << d.status();
    const std::string out = (dir / (drop ? "dropped" : "kept")).string();
    ASSERT_TRUE(w->MoveTo(out).ok());
    auto reread = DigestOfFile(out);
    ASSERT_TRUE(reread.ok()) << reread.status();
    EXPECT_TRUE(SameDigest(*reread, expected)) << DigestToString(*reread);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace farm
