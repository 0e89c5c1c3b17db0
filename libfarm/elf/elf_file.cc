#include "libfarm/elf/elf_file.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace farm {
namespace {

constexpr uint64_t kHeaderSize = 64;
constexpr uint64_t kSectionHeaderSize = 64;
constexpr uint64_t kProgramHeaderSize = 56;
constexpr uint32_t kSegmentLoad = 1;

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed ELF: ", what));
}

}  // namespace

std::string ElfMachineName(uint16_t machine) {
  switch (machine) {
    case kElfMachineX86_64:
      return "x86_64";
    case kElfMachineAarch64:
      return "aarch64";
    case kElfMachinePpc64:
      return "ppc64le";
    case kElfMachineS390:
      return "s390x";
    case kElfMachineRiscv:
      return "riscv64";
    default:
      return absl::StrCat("ELF machine ", machine);
  }
}

bool ElfFile::HasMagic(ByteSpan data) {
  return data.size() >= 4 && data[0] == 0x7f && data[1] == 'E' && data[2] == 'L' && data[3] == 'F';
}

absl::StatusOr<ElfFile> ElfFile::Parse(ByteSpan data) {
  if (!HasMagic(data)) return absl::InvalidArgumentError("not an ELF file (no \\x7fELF magic)");
  if (data.size() < kHeaderSize) return Malformed("file shorter than the ELF header");
  if (data[4] != 2) {
    return absl::UnimplementedError("32-bit ELF is not supported (only ELFCLASS64)");
  }
  if (data[5] != 1) {
    return absl::UnimplementedError("big-endian ELF is not supported (only ELFDATA2LSB)");
  }
  ElfFile elf;
  elf.data_ = data;
  elf.os_abi_ = data[7];
  elf.abi_version_ = data[8];
  elf.type_ = *LoadLE<uint16_t>(data, 0x10);
  elf.machine_ = *LoadLE<uint16_t>(data, 0x12);
  elf.flags_ = *LoadLE<uint32_t>(data, 0x30);
  const uint64_t phoff = *LoadLE<uint64_t>(data, 0x20);
  const uint64_t shoff = *LoadLE<uint64_t>(data, 0x28);
  const uint16_t phentsize = *LoadLE<uint16_t>(data, 0x36);
  const uint16_t phnum = *LoadLE<uint16_t>(data, 0x38);
  const uint16_t shentsize = *LoadLE<uint16_t>(data, 0x3a);
  uint64_t shnum = *LoadLE<uint16_t>(data, 0x3c);
  uint32_t shstrndx = *LoadLE<uint16_t>(data, 0x3e);

  if (phnum != 0) {
    if (phentsize < kProgramHeaderSize) return Malformed("program header entry too small");
    if (!SubSpan(data, phoff, uint64_t{phnum} * phentsize)) {
      return Malformed("program headers lie outside the file");
    }
    for (uint64_t i = 0; i < phnum; ++i) {
      const uint64_t at = phoff + i * phentsize;
      if (*LoadLE<uint32_t>(data, at) != kSegmentLoad) continue;
      elf.load_segments_.push_back(ElfSegment{.type = kSegmentLoad,
                                              .offset = *LoadLE<uint64_t>(data, at + 0x08),
                                              .address = *LoadLE<uint64_t>(data, at + 0x10),
                                              .file_size = *LoadLE<uint64_t>(data, at + 0x20)});
    }
  }

  if (shoff == 0) return elf;  // stripped of section headers: nothing further to list
  if (shentsize < kSectionHeaderSize) return Malformed("section header entry too small");
  // More than 0xff00 sections: the real count and string-table index live in section 0.
  if (shnum == 0 || shstrndx == 0xffff) {
    if (!SubSpan(data, shoff, kSectionHeaderSize)) return Malformed("section 0 outside the file");
    if (shnum == 0) shnum = *LoadLE<uint64_t>(data, shoff + 0x20);
    if (shstrndx == 0xffff) shstrndx = *LoadLE<uint32_t>(data, shoff + 0x28);
  }
  if (shnum > data.size() / kSectionHeaderSize || !SubSpan(data, shoff, shnum * shentsize)) {
    return Malformed("section headers lie outside the file");
  }
  elf.section_table_offset_ = shoff;
  elf.section_entry_size_ = shentsize;
  elf.sections_.reserve(shnum);
  std::vector<uint32_t> name_offsets;
  name_offsets.reserve(shnum);
  for (uint64_t i = 0; i < shnum; ++i) {
    const uint64_t at = shoff + i * shentsize;
    ElfSection s;
    s.index = static_cast<uint32_t>(i);
    name_offsets.push_back(*LoadLE<uint32_t>(data, at));
    s.type = *LoadLE<uint32_t>(data, at + 0x04);
    s.flags = *LoadLE<uint64_t>(data, at + 0x08);
    s.address = *LoadLE<uint64_t>(data, at + 0x10);
    s.offset = *LoadLE<uint64_t>(data, at + 0x18);
    s.size = *LoadLE<uint64_t>(data, at + 0x20);
    s.link = *LoadLE<uint32_t>(data, at + 0x28);
    s.info = *LoadLE<uint32_t>(data, at + 0x2c);
    s.alignment = *LoadLE<uint64_t>(data, at + 0x30);
    s.entry_size = *LoadLE<uint64_t>(data, at + 0x38);
    elf.sections_.push_back(s);
  }
  if (shstrndx >= shnum) return Malformed("section name table index out of range");
  const ElfSection& names = elf.sections_[shstrndx];
  if (names.type == kSectionNoBits) return Malformed("section name table has no bytes");
  const auto name_bytes = SubSpan(data, names.offset, names.size);
  if (!name_bytes) return Malformed("section name table lies outside the file");
  for (uint64_t i = 0; i < shnum; ++i) {
    const auto name = CStringAt(*name_bytes, name_offsets[i]);
    if (!name) return Malformed(absl::StrCat("section ", i, " has a bad name offset"));
    elf.sections_[i].name = *name;
  }
  return elf;
}

const ElfSection* ElfFile::FindSection(std::string_view name) const {
  for (const ElfSection& s : sections_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ElfSection* ElfFile::SectionAt(uint32_t index) const {
  return index < sections_.size() ? &sections_[index] : nullptr;
}

absl::StatusOr<ByteSpan> ElfFile::SectionData(const ElfSection& section) const {
  if (section.type == kSectionNoBits) return ByteSpan();
  const auto bytes = SubSpan(data_, section.offset, section.size);
  if (!bytes) {
    return Malformed(absl::StrCat("section ", std::string(section.name), " lies outside the file"));
  }
  return *bytes;
}

std::optional<uint64_t> ElfFile::AddressToOffset(uint64_t address) const {
  for (const ElfSegment& seg : load_segments_) {
    if (address >= seg.address && address - seg.address < seg.file_size) {
      return seg.offset + (address - seg.address);
    }
  }
  return std::nullopt;
}

}  // namespace farm
