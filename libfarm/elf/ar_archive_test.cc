#include "libfarm/elf/ar_archive.h"

#include <gtest/gtest.h>

#include "absl/strings/str_format.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/testing/nvcc_fixtures.h"

namespace farm {
namespace {

std::string Header(const std::string& name, size_t size) {
  return absl::StrFormat("%-16s%-12s%-6s%-6s%-8s%-10d`\n", name, "0", "0", "0", "644", size);
}

TEST(ArArchiveTest, ListsTheObjectsOfARealStaticLibrary) {
  auto fixtures = testing::GetNvccFixtures();
  ASSERT_TRUE(fixtures.ok()) << fixtures.status();
  auto file = MappedFile::Open((*fixtures)->static_archive);
  ASSERT_TRUE(file.ok());
  auto members = ReadArArchive(file->bytes());
  ASSERT_TRUE(members.ok()) << members.status();
  ASSERT_EQ(members->size(), 2u);
  EXPECT_EQ((*members)[0].name, "tu_a.o");
  EXPECT_EQ((*members)[1].name, "tu_c.o");
  EXPECT_TRUE(ElfFile::Parse((*members)[1].data).ok());
}

TEST(ArArchiveTest, ResolvesGnuAndBsdLongNames) {
  const std::string long_name = "a_really_long_object_name.o";
  const std::string table = long_name + "/\n";
  std::string archive = "!<arch>\n";
  archive += Header("//", table.size()) + table + (table.size() % 2 ? "\n" : "");
  archive += Header("/0", 3) + "abc" + "\n";  // odd size: one padding byte
  archive += Header("short.o/", 2) + "xy";
  archive += Header("#1/8", 8 + 1) + std::string("bsd.o\0\0\0", 8) + "z" + "\n";
  auto members = ReadArArchive(AsBytes(archive));
  ASSERT_TRUE(members.ok()) << members.status();
  ASSERT_EQ(members->size(), 3u);
  EXPECT_EQ((*members)[0].name, long_name);
  EXPECT_EQ(AsChars((*members)[0].data), "abc");
  EXPECT_EQ((*members)[1].name, "short.o");
  EXPECT_EQ((*members)[2].name, "bsd.o");
  EXPECT_EQ(AsChars((*members)[2].data), "z");
}

TEST(ArArchiveTest, RefusesMalformedArchives) {
  EXPECT_FALSE(ReadArArchive(AsBytes("!<arch>\nshort")).ok());
  EXPECT_FALSE(ReadArArchive(AsBytes("!<arch>\n" + Header("x.o/", 100) + "tiny")).ok());
  EXPECT_FALSE(ReadArArchive(AsBytes("!<arch>\n" + Header("/99", 0))).ok());
  EXPECT_EQ(ReadArArchive(AsBytes("!<thin>\n")).status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(ReadArArchive(AsBytes("not an archive")).ok());
}

}  // namespace
}  // namespace farm
