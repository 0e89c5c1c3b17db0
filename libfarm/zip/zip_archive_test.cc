#include "libfarm/zip/zip_archive.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

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
  // Open's archive-wide ratio refuses it first; without that, Read's own bound does.
  DeclareSize(bytes, 3'000'000'000u);
  EXPECT_EQ(ZipArchive::Open(bytes).status().code(), absl::StatusCode::kResourceExhausted);
  auto zip = ZipArchive::Open(bytes, ZipLimits{.max_ratio = 0});
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

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

// Offset of member `index`'s central directory header.
size_t CentralHeader(const std::vector<uint8_t>& bytes, int index) {
  size_t at = AsChars(bytes).find("PK\x01\x02");
  for (int i = 0; i < index && at != std::string::npos; ++i) {
    at = AsChars(bytes).find("PK\x01\x02", at + 4);
  }
  EXPECT_NE(at, std::string::npos);
  return at;
}

void Store32(std::vector<uint8_t>& bytes, size_t at, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

// Sets both sizes the central directory gives member `index` (a stored member's).
void SetCentralSizes(std::vector<uint8_t>& bytes, int index, uint32_t size) {
  const size_t header = CentralHeader(bytes, index);
  Store32(bytes, header + 20, size);
  Store32(bytes, header + 24, size);
}

TEST(ZipArchiveTest, RefusesOverlappingMembers) {
  const std::string path = PythonZip("overlap.zip",
                                     "  z.writestr('a.txt', 'a' * 10, zipfile.ZIP_STORED)\n"
                                     "  z.writestr('b.txt', 'b' * 10, zipfile.ZIP_STORED)\n");
  std::vector<uint8_t> bytes = ReadBytes(path);
  ASSERT_TRUE(ZipArchive::Open(bytes).ok());
  // a.txt's data now reaches over b.txt's local header and data, as in David Fifield's
  // zip bomb where every member inflates one shared stream.
  const size_t b_header = AsChars(bytes).find("PK\x03\x04", 4);
  ASSERT_NE(b_header, std::string::npos);
  SetCentralSizes(bytes, 0, static_cast<uint32_t>(b_header + 30 + 5 + 10 - (30 + 5)));
  auto zip = ZipArchive::Open(bytes);
  ASSERT_FALSE(zip.ok());
  EXPECT_EQ(zip.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(zip.status().message(),
            absl::StrCat("malformed zip: member \"b.txt\" (bytes ", b_header, "-", b_header + 45,
                         ") overlaps member \"a.txt\" (bytes 0-", b_header + 45,
                         "): overlapping members make a zip bomb, one stream inflated once per "
                         "member. Fix: rebuild the archive with a standard zip tool"));

  // Two directory entries for one local header: the second name differs from the header's.
  bytes = ReadBytes(path);
  Store32(bytes, CentralHeader(bytes, 1) + 42, 0);
  zip = ZipArchive::Open(bytes);
  ASSERT_FALSE(zip.ok());
  EXPECT_NE(zip.status().message().find("local header name of b.txt differs"), std::string::npos)
      << zip.status();

  // The last member's data may not run into the central directory.
  bytes = ReadBytes(path);
  SetCentralSizes(bytes, 1, 11);
  zip = ZipArchive::Open(bytes);
  ASSERT_FALSE(zip.ok());
  EXPECT_NE(zip.status().message().find("member \"b.txt\" (bytes " + std::to_string(b_header) +
                                        "-" + std::to_string(b_header + 46) +
                                        ") runs into the central directory"),
            std::string::npos)
      << zip.status();
  std::filesystem::remove(path);
}

TEST(ZipArchiveTest, RefusesArchivesDeclaringTooMuchBeforeInflating) {
  // Five members of 100 bytes that each claim 4 GiB - 16: 20 GiB in all, over the 16 GiB
  // default. Open reads only the directory, so nothing is inflated to find out.
  const std::string path = PythonZip("total.zip",
                                     "  for i in range(5):\n"
                                     "    z.writestr(f'm{i}', 'x' * 100, zipfile.ZIP_DEFLATED)\n");
  std::vector<uint8_t> bytes = ReadBytes(path);
  for (int i = 0; i < 5; ++i) Store32(bytes, CentralHeader(bytes, i) + 24, 0xfffffff0u);
  auto zip = ZipArchive::Open(bytes);
  ASSERT_FALSE(zip.ok());
  EXPECT_EQ(zip.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(zip.status().message(),
            "the members declare 21474836400 bytes uncompressed, over the limit of 17179869184 "
            "per archive; nothing was inflated");

  // The limit is the caller's; so is the ratio of declared to archive bytes.
  const std::string honest = PythonZip("honest.zip",
                                       "  z.writestr('a', 'x' * 1500, zipfile.ZIP_STORED)\n"
                                       "  z.writestr('b', 'y' * 1500, zipfile.ZIP_STORED)\n");
  bytes = ReadBytes(honest);
  EXPECT_TRUE(ZipArchive::Open(bytes).ok());
  zip = ZipArchive::Open(bytes, ZipLimits{.max_total_bytes = 2999});
  ASSERT_FALSE(zip.ok());
  EXPECT_EQ(zip.status().message(),
            "the members declare 3000 bytes uncompressed, over the limit of 2999 per archive; "
            "nothing was inflated");

  const std::string zeros =
      PythonZip("zeros.zip", "  z.writestr('zeros', bytes(1 << 20), zipfile.ZIP_DEFLATED)\n");
  bytes = ReadBytes(zeros);
  EXPECT_TRUE(ZipArchive::Open(bytes).ok()) << "1 MiB is under the ratio check's floor";
  zip = ZipArchive::Open(bytes, ZipLimits{.ratio_floor_bytes = 0});
  ASSERT_FALSE(zip.ok());
  EXPECT_NE(zip.status().message().find("bytes uncompressed from an archive of"), std::string::npos)
      << zip.status();
  std::filesystem::remove(path);
  std::filesystem::remove(honest);
  std::filesystem::remove(zeros);
}

TEST(ZipArchiveTest, ReadToStreamsAMemberInPieces) {
  const std::string path =
      PythonZip("stream.zip",
                "  import random\n"
                "  r = random.Random(7)\n"
                "  z.writestr('big', bytes(r.getrandbits(8) for _ in range(1 << 20)), "
                "zipfile.ZIP_DEFLATED)\n"
                "  z.writestr('stored', 'y' * 600000, zipfile.ZIP_STORED)\n");
  auto file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok());
  auto zip = ZipArchive::Open(file->bytes());
  ASSERT_TRUE(zip.ok()) << zip.status();
  for (const ZipEntry& e : zip->entries()) {
    auto whole = zip->Read(e, 1 << 30);
    ASSERT_TRUE(whole.ok()) << whole.status();
    std::string streamed;
    size_t largest = 0;
    ASSERT_TRUE(zip->ReadTo(e,
                            [&](ByteSpan piece) {
                              largest = std::max(largest, piece.size());
                              streamed += AsChars(piece);
                              return absl::OkStatus();
                            })
                    .ok());
    EXPECT_EQ(streamed, AsChars(whole->bytes())) << e.name;
    EXPECT_LE(largest, 256u << 10) << e.name;
  }
  // The sink's own error ends the read, unchanged.
  EXPECT_EQ(zip->ReadTo(zip->entries()[0], [](ByteSpan) { return absl::CancelledError("enough"); }),
            absl::CancelledError("enough"));
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
