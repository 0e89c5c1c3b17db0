#include "libfarm/fatbin/fatbin_reader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "absl/strings/str_join.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/fatbin/cubin_info.h"
#include "libfarm/fatbin/device_code.h"
#include "libfarm/fatbin/entry_payload.h"
#include "libfarm/testing/nvcc_fixtures.h"

namespace farm {
namespace {

class FatbinReaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto f = testing::GetNvccFixtures();
    if (f.ok())
      fixtures_ = *f;
    else
      error_ = std::string(f.status().message());
  }
  void SetUp() override { ASSERT_NE(fixtures_, nullptr) << error_; }

  // Device code of an ELF on disk; the mapping is kept alive by the test.
  std::vector<DeviceCodeContainer> DeviceCode(const std::string& path) {
    auto file = MappedFile::Open(path);
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok()) return {};
    files_.push_back(std::make_unique<MappedFile>(*std::move(file)));
    auto elf = ElfFile::Parse(files_.back()->bytes());
    EXPECT_TRUE(elf.ok()) << elf.status();
    if (!elf.ok()) return {};
    auto code = ReadElfDeviceCode(*elf);
    EXPECT_TRUE(code.ok()) << code.status();
    return code.ok() ? *code : std::vector<DeviceCodeContainer>{};
  }

  static std::string Archs(const FatbinContainer& c) {
    std::vector<std::string> names;
    for (const FatbinEntry& e : c.entries) {
      names.push_back(e.ArchName() + (e.compression == PayloadCompression::kNone
                                          ? ""
                                          : ":" + PayloadCompressionName(e.compression)));
    }
    return absl::StrJoin(names, " ");
  }

  static const testing::NvccFixtures* fixtures_;
  static std::string error_;
  std::vector<std::unique_ptr<MappedFile>> files_;
};

const testing::NvccFixtures* FatbinReaderTest::fixtures_ = nullptr;
std::string FatbinReaderTest::error_;

TEST_F(FatbinReaderTest, ListsEverySmFrom75To121) {
  const auto code = DeviceCode(fixtures_->sweep_object);
  ASSERT_EQ(code.size(), 1u);
  EXPECT_EQ(code[0].section, ContainerSection::kFatbin);
  EXPECT_EQ(code[0].origin, ContainerOrigin::kTranslationUnit);
  std::set<std::string> archs;
  for (const FatbinEntry& e : code[0].container.entries) {
    archs.insert(e.ArchName());
    if (e.kind != FatbinEntryKind::kCubin) continue;
    // The cubin's own header agrees with the fat-binary entry header.
    auto payload = DecompressEntryPayload(e, 1 << 26);
    ASSERT_TRUE(payload.ok()) << payload.status();
    auto info = ReadCubinInfo(*payload);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->target.sm, e.target.sm);
    EXPECT_TRUE(info->has_code);
    EXPECT_FALSE(info->relocatable);
  }
  EXPECT_EQ(archs, (std::set<std::string>{"sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89",
                                          "sm_90", "sm_100", "sm_103", "sm_110", "sm_120", "sm_121",
                                          "compute_121"}));
}

TEST_F(FatbinReaderTest, TakesArchAndFamilyVariantsFromEntryFlags) {
  const auto code = DeviceCode(fixtures_->variants_object);
  ASSERT_EQ(code.size(), 1u);
  std::set<std::string> archs;
  for (const FatbinEntry& e : code[0].container.entries) archs.insert(e.ArchName());
  EXPECT_EQ(archs, (std::set<std::string>{"sm_90a", "sm_100a", "sm_100f", "sm_103f", "sm_110a",
                                          "sm_120f", "sm_121a", "compute_90a", "compute_120f"}));
}

TEST_F(FatbinReaderTest, ReportsCompressionForEveryCompressMode) {
  const std::map<std::string, std::string> expected = {
      // nvcc stores the PTX entry first.
      {"none", "compute_90 sm_90"},         {"speed", "compute_90:lz4 sm_90"},
      {"balance", "compute_90:zstd sm_90"}, {"default", "compute_90:zstd sm_90"},
      {"absent", "compute_90:zstd sm_90"},  {"size", "compute_90:zstd sm_90:zstd"},
  };
  for (const auto& [mode, archs] : expected) {
    const auto code = DeviceCode(fixtures_->compress_objects.at(mode));
    ASSERT_EQ(code.size(), 1u) << mode;
    EXPECT_EQ(Archs(code[0].container), archs) << "--compress-mode=" << mode;
    for (const FatbinEntry& e : code[0].container.entries) {
      auto payload = DecompressEntryPayload(e, 1 << 26);
      ASSERT_TRUE(payload.ok()) << mode << " " << e.ArchName() << ": " << payload.status();
      if (e.kind == FatbinEntryKind::kCubin) {
        EXPECT_EQ(ReadCubinInfo(*payload)->target.sm, 90);
      } else {
        const std::string text(payload->begin(), payload->end());
        EXPECT_NE(text.find(".target sm_90"), std::string::npos) << mode;
      }
    }
  }
  const auto lz4 = DeviceCode(fixtures_->compress_all_lz4_object);
  ASSERT_EQ(lz4.size(), 1u);
  EXPECT_EQ(Archs(lz4[0].container), "compute_90:lz4 sm_90:lz4");
  auto cubin = DecompressEntryPayload(lz4[0].container.entries[1], 1 << 26);
  ASSERT_TRUE(cubin.ok()) << cubin.status();
  EXPECT_EQ(ReadCubinInfo(*cubin)->target.sm, 90);

  // An entry claiming more than LZ4 can expand to is refused before anything is allocated.
  FatbinEntry liar = lz4[0].container.entries[1];
  liar.uncompressed_size = liar.payload.size() * 256 + 64;
  auto refused = DecompressEntryPayload(liar, uint64_t{1} << 40);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("LZ4 cannot expand that much"), std::string::npos)
      << refused.status();
}

TEST_F(FatbinReaderTest, RelocatableDeviceCodeLivesInNvRelfatbin) {
  const auto object = DeviceCode(fixtures_->rdc_object);
  ASSERT_EQ(object.size(), 1u);
  EXPECT_EQ(object[0].section, ContainerSection::kRelocatable);
  EXPECT_EQ(Archs(object[0].container), "sm_75:zstd compute_90:zstd sm_90:zstd");
  auto cubin = DecompressEntryPayload(object[0].container.entries[0], 1 << 26);
  ASSERT_TRUE(cubin.ok());
  EXPECT_TRUE(ReadCubinInfo(*cubin)->relocatable);

  // Linked: the device-link image (wrapper version 2, real code) plus the per-TU input.
  const auto library = DeviceCode(fixtures_->rdc_library);
  ASSERT_EQ(library.size(), 2u);
  EXPECT_EQ(library[0].section, ContainerSection::kFatbin);
  EXPECT_EQ(library[0].origin, ContainerOrigin::kDeviceLink);
  EXPECT_EQ(Archs(library[0].container), "sm_75 sm_90");
  EXPECT_EQ(library[1].section, ContainerSection::kRelocatable);
  EXPECT_EQ(library[1].origin, ContainerOrigin::kTranslationUnit);
}

TEST_F(FatbinReaderTest, LtoIrEntries) {
  const auto code = DeviceCode(fixtures_->lto_object);
  ASSERT_EQ(code.size(), 1u);
  EXPECT_EQ(code[0].section, ContainerSection::kRelocatable);
  ASSERT_EQ(code[0].container.entries.size(), 1u);
  EXPECT_EQ(code[0].container.entries[0].kind, FatbinEntryKind::kLtoIr);
  EXPECT_EQ(code[0].container.entries[0].ArchName(), "lto_90");
}

TEST_F(FatbinReaderTest, SharedLibraryHasOneContainerPerTranslationUnitPlusTheStub) {
  const auto code = DeviceCode(fixtures_->multi_tu_library);
  ASSERT_EQ(code.size(), 4u);
  EXPECT_EQ(code[0].origin, ContainerOrigin::kDeviceLinkStub);
  EXPECT_EQ(Archs(code[0].container), "sm_75");
  EXPECT_EQ(code[1].origin, ContainerOrigin::kTranslationUnit);
  EXPECT_EQ(Archs(code[1].container), "sm_75 sm_90");
  EXPECT_EQ(Archs(code[2].container), "sm_75 sm_90");
  EXPECT_EQ(Archs(code[3].container), "sm_75");
  // Back to back, in file order.
  EXPECT_EQ(code[1].container.offset, code[0].container.offset + code[0].container.size);
}

TEST_F(FatbinReaderTest, BareCubinAndBareFatbin) {
  auto cubin = MappedFile::Open(fixtures_->bare_cubin);
  ASSERT_TRUE(cubin.ok());
  ASSERT_TRUE(IsCubin(cubin->bytes()));
  auto info = ReadCubinInfo(cubin->bytes());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->target.SmName(), "sm_90a");  // from .note.nv.tkinfo: e_flags has no `a`

  auto fatbin = MappedFile::Open(fixtures_->bare_fatbin);
  ASSERT_TRUE(fatbin.ok());
  auto containers = ReadFatbinContainers(fatbin->bytes());
  ASSERT_TRUE(containers.ok()) << containers.status();
  ASSERT_EQ(containers->size(), 1u);
  EXPECT_EQ(Archs((*containers)[0]), "sm_80 compute_80:zstd");
}

TEST_F(FatbinReaderTest, MalformedContainersAreErrors) {
  auto file = MappedFile::Open(fixtures_->bare_fatbin);
  ASSERT_TRUE(file.ok());
  std::vector<uint8_t> bytes(file->bytes().begin(), file->bytes().end());
  // Every truncation is an error, never a crash.
  for (size_t cut = 1; cut < bytes.size(); cut += 7) {
    EXPECT_FALSE(ReadFatbinContainers(ByteSpan(bytes).first(cut)).ok()) << cut;
  }
  EXPECT_FALSE(ReadFatbinContainers(ByteSpan(bytes).first(bytes.size() - 8)).ok());
  std::vector<uint8_t> huge = bytes;
  const uint64_t fat_size = uint64_t{1} << 62;
  std::memcpy(huge.data() + 8, &fat_size, 8);
  EXPECT_FALSE(ReadFatbinContainers(huge).ok());
  std::vector<uint8_t> entry = bytes;
  const uint32_t tiny_header = 8;
  std::memcpy(entry.data() + 16 + 4, &tiny_header, 4);
  EXPECT_FALSE(ReadFatbinContainers(entry).ok());
  std::vector<uint8_t> both = bytes;
  const uint64_t flags = 0x300011;
  std::memcpy(both.data() + 16 + 0x28, &flags, 8);
  EXPECT_FALSE(ReadFatbinContainers(both).ok());
  std::vector<uint8_t> garbage = bytes;
  garbage.insert(garbage.end(), {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_FALSE(ReadFatbinContainers(garbage).ok());
  std::vector<uint8_t> padded = bytes;
  padded.insert(padded.end(), 16, 0);
  EXPECT_TRUE(ReadFatbinContainers(padded).ok());
}

}  // namespace
}  // namespace farm
