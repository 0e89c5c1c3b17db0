// Read-only view of a 64-bit little-endian ELF file (objects, shared libraries, cubins).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/elf/byte_span.h"

namespace farm {

inline constexpr uint16_t kElfTypeRelocatable = 1;
inline constexpr uint16_t kElfTypeExecutable = 2;
inline constexpr uint16_t kElfTypeShared = 3;
inline constexpr uint16_t kElfMachineX86_64 = 62;
inline constexpr uint16_t kElfMachineAarch64 = 183;
inline constexpr uint16_t kElfMachineCuda = 190;
inline constexpr uint16_t kElfMachinePpc64 = 21;
inline constexpr uint16_t kElfMachineS390 = 22;
inline constexpr uint16_t kElfMachineRiscv = 243;
inline constexpr uint32_t kSectionNoBits = 8;
inline constexpr uint32_t kSectionRela = 4;
inline constexpr uint32_t kSectionSymtab = 2;
inline constexpr uint32_t kSectionVersionNeed = 0x6ffffffe;

// The CPU arch an ELF machine is, as wheels and `uname -m` name it ("x86_64", "aarch64"),
// or "ELF machine N" for one we do not know.
std::string ElfMachineName(uint16_t machine);

struct ElfSection {
  uint32_t index = 0;
  std::string_view name;  // points into the file's bytes
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t address = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  uint32_t info = 0;
  uint64_t entry_size = 0;
  uint64_t alignment = 0;  // sh_addralign
};

struct ElfSegment {
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t address = 0;
  uint64_t file_size = 0;
};

class ElfFile {
 public:
  static bool HasMagic(ByteSpan data);

  // Reads the header, section table and program headers. `data` must outlive the result.
  static absl::StatusOr<ElfFile> Parse(ByteSpan data);

  uint16_t type() const { return type_; }
  uint16_t machine() const { return machine_; }
  uint32_t flags() const { return flags_; }
  uint8_t os_abi() const { return os_abi_; }
  uint8_t abi_version() const { return abi_version_; }
  ByteSpan bytes() const { return data_; }
  const std::vector<ElfSection>& sections() const { return sections_; }
  // Where the section header table is, and the size of one entry (0 when there is none).
  uint64_t section_table_offset() const { return section_table_offset_; }
  uint64_t section_entry_size() const { return section_entry_size_; }

  const ElfSection* FindSection(std::string_view name) const;
  const ElfSection* SectionAt(uint32_t index) const;
  // The section's bytes in the file (empty for SHT_NOBITS); error if it lies outside the file.
  absl::StatusOr<ByteSpan> SectionData(const ElfSection& section) const;
  // The file offset that loads at virtual address `address`, from the PT_LOAD segments.
  std::optional<uint64_t> AddressToOffset(uint64_t address) const;

 private:
  ByteSpan data_;
  uint16_t type_ = 0;
  uint16_t machine_ = 0;
  uint32_t flags_ = 0;
  uint8_t os_abi_ = 0;
  uint8_t abi_version_ = 0;
  uint64_t section_table_offset_ = 0;
  uint64_t section_entry_size_ = 0;
  std::vector<ElfSection> sections_;
  std::vector<ElfSegment> load_segments_;
};

}  // namespace farm
