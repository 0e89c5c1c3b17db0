#include "libfarm/zip/zip_writer.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/zip/zip_archive.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

ByteSpan Bytes(const std::string& s) {
  return ByteSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

void WriteAndCheck(bool force_zip64) {
  const fs::path path = fs::temp_directory_path() /
                        absl::StrCat("zip_writer_", ::getpid(), force_zip64 ? "_64" : "", ".zip");
  const std::string big(300000, 'x');
  {
    auto writer = ZipWriter::Create(path.string(), ZipWriterOptions{force_zip64});
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE(writer->Add("pkg/a.txt", Bytes("hello")).ok());
    ASSERT_TRUE(writer->Add("pkg/big.bin", Bytes(big), 0755).ok());
    ASSERT_TRUE(writer->Add("pkg/stored.txt", Bytes("as is"), 0644, false).ok());
    ASSERT_TRUE(writer->Add("pkg/empty", Bytes("")).ok());
    EXPECT_FALSE(writer->Add("pkg/a.txt", Bytes("again")).ok());
    EXPECT_FALSE(writer->Add("../evil", Bytes("x")).ok());
    ASSERT_TRUE(writer->Finish().ok());
    EXPECT_FALSE(writer->Add("late", Bytes("x")).ok());
  }
  // Our reader...
  auto mapped = MappedFile::Open(path.string());
  ASSERT_TRUE(mapped.ok());
  auto zip = ZipArchive::Open(mapped->bytes());
  ASSERT_TRUE(zip.ok()) << zip.status();
  ASSERT_EQ(zip->entries().size(), 4u);
  const ZipEntry* b = zip->Find("pkg/big.bin");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->method, 8);
  EXPECT_LT(b->compressed_size, 10000u);
  auto data = zip->Read(*b, 1 << 20);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->bytes().size(), big.size());
  EXPECT_EQ((b->external_attributes >> 16) & 0777, 0755u);
  // ...and Python's, which also checks every CRC (testzip).
  auto r = RunCommand({FARM_TOOLS_PYTHON, "-c",
                       "import sys, zipfile\n"
                       "z = zipfile.ZipFile(sys.argv[1])\n"
                       "assert z.testzip() is None\n"
                       "assert z.read('pkg/a.txt') == b'hello'\n"
                       "assert z.read('pkg/stored.txt') == b'as is'\n"
                       "assert z.read('pkg/big.bin') == b'x' * 300000\n"
                       "assert z.getinfo('pkg/stored.txt').compress_type == 0\n"
                       "print(len(z.namelist()))\n",
                       path.string()});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->stderr_text;
  EXPECT_EQ(r->stdout_text, "4\n");
  fs::remove(path);
}

TEST(ZipWriterTest, ClassicArchiveReadsBackEverywhere) { WriteAndCheck(false); }
TEST(ZipWriterTest, Zip64LayoutReadsBackEverywhere) { WriteAndCheck(true); }

TEST(ZipWriterTest, AddRawCopiesMembersAsTheyAreStored) {
  const fs::path source = fs::temp_directory_path() / absl::StrCat("zip_raw_src_", ::getpid());
  const fs::path copy = fs::temp_directory_path() / absl::StrCat("zip_raw_copy_", ::getpid());
  const std::string big(300000, 'x');
  {
    auto writer = ZipWriter::Create(source.string());
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE(writer->Add("pkg/big.bin", Bytes(big), 0755).ok());
    ASSERT_TRUE(writer->Add("pkg/stored.txt", Bytes("as is"), 0644, false).ok());
    ASSERT_TRUE(writer->Finish().ok());
  }
  auto mapped = MappedFile::Open(source.string());
  ASSERT_TRUE(mapped.ok());
  auto zip = ZipArchive::Open(mapped->bytes());
  ASSERT_TRUE(zip.ok()) << zip.status();
  {
    auto writer = ZipWriter::Create(copy.string());
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (const ZipEntry& e : zip->entries()) {
      ASSERT_TRUE(writer->AddRaw("renamed/" + e.name, *zip, e, 0644).ok());
    }
    EXPECT_FALSE(writer->AddRaw("renamed/pkg/big.bin", *zip, zip->entries()[0]).ok());
    ASSERT_TRUE(writer->Finish().ok());
  }
  auto copied_file = MappedFile::Open(copy.string());
  ASSERT_TRUE(copied_file.ok());
  auto copied = ZipArchive::Open(copied_file->bytes());
  ASSERT_TRUE(copied.ok()) << copied.status();
  for (const ZipEntry& e : zip->entries()) {
    const ZipEntry* c = copied->Find("renamed/" + e.name);
    ASSERT_NE(c, nullptr) << e.name;
    EXPECT_EQ(c->method, e.method);
    EXPECT_EQ(AsChars(copied->RawBytes(*c)), AsChars(zip->RawBytes(e))) << e.name;
  }
  auto r = RunCommand({FARM_TOOLS_PYTHON, "-c",
                       "import sys, zipfile\n"
                       "z = zipfile.ZipFile(sys.argv[1])\n"
                       "assert z.testzip() is None\n"
                       "assert z.read('renamed/pkg/big.bin') == b'x' * 300000\n"
                       "assert z.read('renamed/pkg/stored.txt') == b'as is'\n",
                       copy.string()});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->stderr_text;
  fs::remove(source);
  fs::remove(copy);
}

}  // namespace
}  // namespace farm
