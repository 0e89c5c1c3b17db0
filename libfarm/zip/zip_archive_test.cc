#include "libfarm/zip/zip_archive.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "libfarm/elf/mapped_file.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

// Writes a zip with Python's zipfile: `script` sees `z` (the open ZipFile) and `zipfile`.
std::string PythonZip(const std::string& name, const std::string& script) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("farm_zip_test_" + std::to_string(::getpid()) + "_" + name);
  auto result = RunCommand({"python3", "-c",
                            "import sys, zipfile, warnings\nwarnings.simplefilter('ignore')\n"
                            "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n" +
                                script,
                            path});
  EXPECT_TRUE(result.ok() && result->exit_code == 0)
      << (result.ok() ? result->stderr_text : result.status().ToString());
  return path;
}

TEST(ZipArchiveTest, ReadsStoredAndDeflatedMembers) {
  const std::string path =
      PythonZip("basic.zip",
                "  z.writestr('a/stored.txt', 'hello stored', zipfile.ZIP_STORED)\n"
                "  z.writestr('a/deflated.txt', 'hello deflated ' * 1000, zipfile.ZIP_DEFLATED)\n"
                "  z.writestr('empty.txt', '', zipfile.ZIP_DEFLATED)\n"
                "  z.writestr('dir/', '')\n");
  auto file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok());
  auto zip = ZipArchive::Open(file->bytes());
  ASSERT_TRUE(zip.ok()) << zip.status();
  ASSERT_EQ(zip->entries().size(), 4u);
  EXPECT_EQ(zip->entries()[0].name, "a/stored.txt");
  EXPECT_EQ(zip->entries()[0].method, 0);
  EXPECT_EQ(zip->entries()[1].method, 8);
  EXPECT_TRUE(zip->entries()[3].IsDirectory());
  auto stored = zip->Read(zip->entries()[0], 1 << 20);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(AsChars(stored->bytes()), "hello stored");
  auto deflated = zip->Read(zip->entries()[1], 1 << 20);
  ASSERT_TRUE(deflated.ok()) << deflated.status();
  EXPECT_EQ(deflated->bytes().size(), 15000u);
  auto empty = zip->Read(zip->entries()[2], 1 << 20);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->bytes().empty());
  EXPECT_EQ(zip->Read(zip->entries()[1], 100).status().code(),
            absl::StatusCode::kResourceExhausted);
  std::filesystem::remove(path);
}

TEST(ZipArchiveTest, DetectsCorruptionAndDuplicates) {
  const std::string path =
      PythonZip("corrupt.zip", "  z.writestr('x.txt', 'payload-payload', zipfile.ZIP_STORED)\n");
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  auto zip = ZipArchive::Open(bytes);
  ASSERT_TRUE(zip.ok());
  // Flip one payload byte: the CRC check notices.
  const size_t at = AsChars(bytes).find("payload-payload");
  bytes[at] ^= 0x20;
  auto read = zip->Read(zip->entries()[0], 1 << 20);
  EXPECT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("CRC-32"), absl::string_view::npos);

  const std::string dup = PythonZip("dup.zip",
                                    "  z.writestr('same.txt', 'one')\n"
                                    "  z.writestr('same.txt', 'two')\n");
  auto dup_file = MappedFile::Open(dup);
  ASSERT_TRUE(dup_file.ok());
  auto dup_zip = ZipArchive::Open(dup_file->bytes());
  EXPECT_FALSE(dup_zip.ok());
  EXPECT_NE(dup_zip.status().message().find("duplicate member \"same.txt\""),
            absl::string_view::npos);

  EXPECT_FALSE(ZipArchive::Open(AsBytes("PK\x05\x06 not really")).ok());
  EXPECT_FALSE(ZipArchive::Open(AsBytes("")).ok());
  std::filesystem::remove(path);
  std::filesystem::remove(dup);
}

// Sets the uncompressed size the first member declares, in its local and central headers.
void DeclareSize(std::vector<uint8_t>& bytes, uint32_t size) {
  for (const char* magic : {"PK\x03\x04", "PK\x01\x02"}) {
    const size_t header = AsChars(bytes).find(magic);
    ASSERT_NE(header, std::string::npos);
    const size_t field = header + (magic[2] == '\x03' ? 22 : 24);
    for (int i = 0; i < 4; ++i) bytes[field + i] = static_cast<uint8_t>(size >> (8 * i));
  }
}

TEST(ZipArchiveTest, MemberLyingAboutItsSizeCostsOnlyWhatItInflatesTo) {
  const std::string path =
      PythonZip("liar.zip", "  z.writestr('lib.so', 'x' * 100000, zipfile.ZIP_DEFLATED)\n");
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  // 3 GB from ~100 compressed bytes: more than deflate can produce, refused before allocating.
  DeclareSize(bytes, 3'000'000'000u);
  auto zip = ZipArchive::Open(bytes);
  ASSERT_TRUE(zip.ok()) << zip.status();
  auto read = zip->Read(zip->entries()[0], uint64_t{8} << 30);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("deflate cannot expand that much"), std::string::npos)
      << read.status();

  // A plausible lie (a little more than it really holds) fails on what actually inflated.
  DeclareSize(bytes, 100'100);
  zip = ZipArchive::Open(bytes);
  ASSERT_TRUE(zip.ok()) << zip.status();
  read = zip->Read(zip->entries()[0], uint64_t{8} << 30);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("does not inflate to its declared 100100 bytes"),
            std::string::npos)
      << read.status();

  // The truth still reads.
  DeclareSize(bytes, 100'000);
  zip = ZipArchive::Open(bytes);
  ASSERT_TRUE(zip.ok()) << zip.status();
  read = zip->Read(zip->entries()[0], uint64_t{8} << 30);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->bytes().size(), 100'000u);
  std::filesystem::remove(path);
}

TEST(ZipArchiveTest, RefusesUnsafeMemberPaths) {
  for (const char* ok : {"pkg/__init__.py", "pkg-1.0.dist-info/RECORD", "a/b/c.so", "dir/"}) {
    EXPECT_TRUE(CheckMemberPath(ok).ok()) << ok;
  }
  for (const char* bad :
       {"../evil.py", "pkg/../../x", "/etc/passwd", "C:/x", "a\\b", "a//b", "./a", "", "a/./b"}) {
    EXPECT_FALSE(CheckMemberPath(bad).ok()) << bad;
  }
  EXPECT_EQ(CheckMemberPath("../evil.py").message(),
            "unsafe member path \"../evil.py\": \"..\" leaves the install directory");
}

}  // namespace
}  // namespace farm
