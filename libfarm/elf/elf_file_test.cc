#include "libfarm/elf/elf_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "libfarm/elf/mapped_file.h"
#include "libfarm/elf/version_needs.h"
#include "libfarm/testing/nvcc_fixtures.h"

namespace farm {
namespace {

const testing::NvccFixtures& Fixtures() {
  auto f = testing::GetNvccFixtures();
  if (!f.ok()) {
    ADD_FAILURE() << f.status();
    static testing::NvccFixtures empty;
    return empty;
  }
  return **f;
}

std::vector<VersionNeed> NeedsOf(const std::string& path) {
  auto file = MappedFile::Open(path);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return {};
  auto elf = ElfFile::Parse(file->bytes());
  EXPECT_TRUE(elf.ok()) << elf.status();
  if (!elf.ok()) return {};
  auto needs = ReadVersionNeeds(*elf);
  EXPECT_TRUE(needs.ok()) << needs.status();
  return needs.ok() ? *needs : std::vector<VersionNeed>{};
}

TEST(ElfFileTest, MachinesAreNamedAsWheelsNameTheirArch) {
  EXPECT_EQ(ElfMachineName(kElfMachineX86_64), "x86_64");
  EXPECT_EQ(ElfMachineName(kElfMachineAarch64), "aarch64");
  EXPECT_EQ(ElfMachineName(kElfMachinePpc64), "ppc64le");
  EXPECT_EQ(ElfMachineName(kElfMachineS390), "s390x");
  EXPECT_EQ(ElfMachineName(kElfMachineRiscv), "riscv64");
  EXPECT_EQ(ElfMachineName(0x1234), "ELF machine 4660");
}

TEST(ElfFileTest, ReadsGlibcNeedsAndTheSymbolsBehindThem) {
  const auto needs = NeedsOf(Fixtures().pthread_library);
  auto it = std::find_if(needs.begin(), needs.end(),
                         [](const VersionNeed& n) { return n.version == "GLIBC_2.34"; });
  ASSERT_NE(it, needs.end());
  EXPECT_EQ(it->library, "libc.so.6");
  EXPECT_EQ(it->symbols, std::vector<std::string>{"pthread_create"});
  EXPECT_EQ(GlibcFloor(needs)->ToString(), "2.34");

  const auto newer = NeedsOf(Fixtures().arc4random_library);
  EXPECT_EQ(GlibcFloor(newer)->ToString(), "2.36");
}

TEST(ElfFileTest, NvccLinkedLibraryNeedsTheLoaderButItDoesNotCount) {
  const auto needs = NeedsOf(Fixtures().complete_library);
  bool loader = false;
  for (const VersionNeed& n : needs) loader |= n.library.rfind("ld-linux", 0) == 0;
  EXPECT_TRUE(loader);
  EXPECT_EQ(GlibcFloor(needs)->ToString(), "2.34");
  EXPECT_EQ(GlibcFloor({{"ld-linux-x86-64.so.2", "GLIBC_2.35", {}}}), std::nullopt);
  EXPECT_EQ(GlibcFloor({{"libc.so.6", "GLIBC_2.2.5", {}}, {"libc.so.6", "GLIBC_PRIVATE", {}}})
                ->ToString(),
            "2.2");
}

TEST(ElfFileTest, ObjectsHaveSectionsAndNoNeeds) {
  auto file = MappedFile::Open(Fixtures().tu_a_object);
  ASSERT_TRUE(file.ok());
  auto elf = ElfFile::Parse(file->bytes());
  ASSERT_TRUE(elf.ok()) << elf.status();
  EXPECT_EQ(elf->type(), kElfTypeRelocatable);
  EXPECT_EQ(elf->machine(), kElfMachineX86_64);
  EXPECT_NE(elf->FindSection(".nv_fatbin"), nullptr);
  EXPECT_NE(elf->FindSection(".nvFatBinSegment"), nullptr);
  EXPECT_TRUE(ReadVersionNeeds(*elf)->empty());
}

TEST(ElfFileTest, SplitsSymbolVersions) {
  auto split = SplitSymbolVersion("GLIBCXX_3.4.30");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->first, "GLIBCXX");
  EXPECT_EQ(split->second.ToString(), "3.4.30");
  EXPECT_FALSE(SplitSymbolVersion("GLIBC_PRIVATE"));
  EXPECT_LT(SplitSymbolVersion("GLIBC_2.9")->second, SplitSymbolVersion("GLIBC_2.17")->second);
}

TEST(ElfFileTest, RefusesMalformedInput) {
  std::vector<uint8_t> header(64, 0);
  header[0] = 0x7f, header[1] = 'E', header[2] = 'L', header[3] = 'F';
  header[4] = 1, header[5] = 1;
  EXPECT_EQ(ElfFile::Parse(header).status().code(), absl::StatusCode::kUnimplemented);
  header[4] = 2;
  EXPECT_TRUE(ElfFile::Parse(header).ok());  // no sections, no segments: empty but valid
  header[0x28] = 0xff;                       // section headers far past the end
  header[0x3a] = 64;
  header[0x3c] = 3;
  EXPECT_FALSE(ElfFile::Parse(header).ok());
  EXPECT_FALSE(ElfFile::Parse(ByteSpan(header).first(20)).ok());
  const std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o'};
  EXPECT_FALSE(ElfFile::Parse(text).ok());
}

}  // namespace
}  // namespace farm
