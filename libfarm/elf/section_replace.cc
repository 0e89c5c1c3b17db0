#include "libfarm/elf/section_replace.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libfarm/elf/elf_file.h"

namespace farm {
namespace {

constexpr uint64_t kElfHeaderSize = 64;
constexpr uint64_t kSectionTableAlignment = 8;
constexpr uint64_t kSectionOffsetField = 0x18;
constexpr uint64_t kSectionSizeField = 0x20;
constexpr uint64_t kHeaderSectionTableField = 0x28;
constexpr uint32_t kSectionRel = 9;

absl::Status Refuse(const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("cannot replace a section: ", why));
}

uint64_t AlignUp(uint64_t value, uint64_t alignment) {
  if (alignment <= 1) return value;
  return (value + alignment - 1) / alignment * alignment;
}

// One stretch of the file: a section's bytes (none for SHT_NOBITS or empty ones) or, with
// `section` unset, the section header table.
struct Piece {
  const ElfSection* section = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t alignment = 1;
};

// Offsets for `pieces` in order, each at the next multiple of its alignment after the one
// before; `size_of` gives each piece's size.
template <typename SizeOf>
std::vector<uint64_t> Layout(const std::vector<Piece>& pieces, SizeOf size_of, uint64_t& end) {
  std::vector<uint64_t> offsets;
  uint64_t cursor = kElfHeaderSize;
  for (const Piece& p : pieces) {
    cursor = AlignUp(cursor, p.alignment);
    offsets.push_back(cursor);
    cursor += size_of(p);
  }
  end = cursor;
  return offsets;
}

void StoreLE64(std::string& out, uint64_t offset, uint64_t value) {
  std::memcpy(out.data() + offset, &value, sizeof(value));
}

}  // namespace

absl::StatusOr<std::string> ReplaceSectionContents(std::string_view object, std::string_view name,
                                                   std::string_view contents) {
  const ByteSpan bytes(reinterpret_cast<const uint8_t*>(object.data()), object.size());
  auto elf = ElfFile::Parse(bytes);
  if (!elf.ok()) return absl::InvalidArgumentError(elf.status().message());
  if (elf->type() != kElfTypeRelocatable) return Refuse("not a relocatable object");
  if (elf->section_table_offset() == 0) return Refuse("no section header table");

  const ElfSection* target = nullptr;
  for (const ElfSection& s : elf->sections()) {
    if (s.name == name) {
      if (target != nullptr)
        return Refuse(absl::StrCat("more than one '", std::string(name), "' section"));
      target = &s;
    }
  }
  if (target == nullptr) return Refuse(absl::StrCat("no '", std::string(name), "' section"));
  if (target->type == kSectionNoBits)
    return Refuse(absl::StrCat("'", std::string(name), "' has no bytes"));
  for (const ElfSection& s : elf->sections()) {
    if ((s.type == kSectionRela || s.type == kSectionRel) && s.info == target->index) {
      return Refuse(absl::StrCat("'", std::string(name), "' has relocations"));
    }
  }

  std::vector<Piece> pieces;
  for (const ElfSection& s : elf->sections()) {
    if (s.index == 0) continue;
    const uint64_t size = s.type == kSectionNoBits ? 0 : s.size;
    pieces.push_back({&s, s.offset, size, std::max<uint64_t>(1, s.alignment)});
  }
  const uint64_t table_size = elf->sections().size() * elf->section_entry_size();
  pieces.push_back({nullptr, elf->section_table_offset(), table_size, kSectionTableAlignment});
  // File order; pieces at one offset (empty sections) in section order, the table after them.
  std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    if (a.offset != b.offset) return a.offset < b.offset;
    if (a.section == nullptr || b.section == nullptr) return b.section == nullptr && a.section;
    return a.section->index < b.section->index;
  });

  uint64_t old_end = 0;
  const std::vector<uint64_t> old_offsets = Layout(
      pieces, [](const Piece& p) { return p.size; }, old_end);
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (old_offsets[i] != pieces[i].offset) {
      const std::string_view what = pieces[i].section ? pieces[i].section->name : "section table";
      return Refuse(absl::StrCat("the object is not laid out section after section (",
                                 std::string(what), " is at ", pieces[i].offset, ", not ",
                                 old_offsets[i], ")"));
    }
  }
  if (old_end != object.size()) return Refuse("bytes follow the last section");

  uint64_t new_end = 0;
  const std::vector<uint64_t> offsets = Layout(
      pieces, [&](const Piece& p) { return p.section == target ? contents.size() : p.size; },
      new_end);
  std::string out(new_end, '\0');
  std::memcpy(out.data(), object.data(), kElfHeaderSize);
  uint64_t table_offset = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    if (p.section == nullptr) {
      table_offset = offsets[i];
      std::memcpy(out.data() + table_offset, object.data() + p.offset, p.size);
      continue;
    }
    const std::string_view data = p.section == target ? contents : object.substr(p.offset, p.size);
    std::memcpy(out.data() + offsets[i], data.data(), data.size());
  }
  StoreLE64(out, kHeaderSectionTableField, table_offset);
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].section == nullptr) continue;
    const uint64_t header = table_offset + pieces[i].section->index * elf->section_entry_size();
    StoreLE64(out, header + kSectionOffsetField, offsets[i]);
    if (pieces[i].section == target) StoreLE64(out, header + kSectionSizeField, contents.size());
  }
  return out;
}

}  // namespace farm
