#include "libfarm/elf/version_needs.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace farm {
namespace {

constexpr uint64_t kVerneedSize = 16;
constexpr uint32_t kSectionVersionSymbols = 0x6fffffff;
constexpr uint64_t kSymbolSize = 24;
constexpr uint16_t kVersionIndexMask = 0x7fff;

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed .gnu.version_r: ", what));
}

// Names the undefined dynamic symbols each needed version is for, so a policy failure can
// say "pthread_create@GLIBC_2.34". Best effort: a library without .gnu.version keeps none.
void AttachSymbols(const ElfFile& elf, const std::vector<uint16_t>& indexes,
                   std::vector<VersionNeed>& needs) {
  const ElfSection* versym = nullptr;
  for (const ElfSection& s : elf.sections()) {
    if (s.type == kSectionVersionSymbols) versym = &s;
  }
  if (versym == nullptr) return;
  const ElfSection* dynsym = elf.SectionAt(versym->link);
  if (dynsym == nullptr) return;
  const ElfSection* dynstr = elf.SectionAt(dynsym->link);
  if (dynstr == nullptr) return;
  auto versions = elf.SectionData(*versym);
  auto symbols = elf.SectionData(*dynsym);
  auto strings = elf.SectionData(*dynstr);
  if (!versions.ok() || !symbols.ok() || !strings.ok()) return;
  const uint64_t count = std::min<uint64_t>(versions->size() / 2, symbols->size() / kSymbolSize);
  for (uint64_t i = 1; i < count; ++i) {
    const uint16_t index = *LoadLE<uint16_t>(*versions, i * 2) & kVersionIndexMask;
    if (index < 2) continue;  // local or global: no version
    const uint16_t section_index = *LoadLE<uint16_t>(*symbols, i * kSymbolSize + 6);
    if (section_index != 0) continue;  // defined here, not needed from elsewhere
    for (size_t n = 0; n < needs.size(); ++n) {
      if (indexes[n] != index) continue;
      const auto name = CStringAt(*strings, *LoadLE<uint32_t>(*symbols, i * kSymbolSize));
      if (name) needs[n].symbols.emplace_back(*name);
    }
  }
}

}  // namespace

std::string DottedVersion::ToString() const { return absl::StrJoin(parts, "."); }

std::optional<std::pair<std::string, DottedVersion>> SplitSymbolVersion(absl::string_view name) {
  const size_t underscore = name.rfind('_');
  if (underscore == absl::string_view::npos || underscore == 0) return std::nullopt;
  DottedVersion version;
  for (absl::string_view part : absl::StrSplit(name.substr(underscore + 1), '.')) {
    int value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < 0) return std::nullopt;
    version.parts.push_back(value);
  }
  return std::make_pair(std::string(name.substr(0, underscore)), version);
}

absl::StatusOr<std::vector<VersionNeed>> ReadVersionNeeds(const ElfFile& elf) {
  std::vector<VersionNeed> needs;
  const ElfSection* section = nullptr;
  for (const ElfSection& s : elf.sections()) {
    if (s.type == kSectionVersionNeed) section = &s;
  }
  if (section == nullptr) return needs;
  auto data = elf.SectionData(*section);
  if (!data.ok()) return data.status();
  const ElfSection* strings_section = elf.SectionAt(section->link);
  if (strings_section == nullptr) return Malformed("string table index out of range");
  auto strings = elf.SectionData(*strings_section);
  if (!strings.ok()) return strings.status();

  // Both the entry count (sh_info) and the section size bound the walk, so a cycle of
  // vn_next/vna_next offsets cannot loop forever.
  const uint64_t max_records = data->size() / kVerneedSize;
  std::vector<uint16_t> indexes;  // vna_other of each entry: what .gnu.version refers to
  uint64_t offset = 0;
  for (uint64_t i = 0; i < section->info; ++i) {
    if (i >= max_records) return Malformed("more entries than fit in the section");
    const auto count = LoadLE<uint16_t>(*data, offset + 2);
    const auto file = LoadLE<uint32_t>(*data, offset + 4);
    const auto aux = LoadLE<uint32_t>(*data, offset + 8);
    const auto next = LoadLE<uint32_t>(*data, offset + 12);
    if (!count || !file || !aux || !next) return Malformed("entry outside the section");
    const auto library = CStringAt(*strings, *file);
    if (!library) return Malformed("bad library name offset");
    uint64_t aux_offset = offset + *aux;
    for (uint16_t j = 0; j < *count; ++j) {
      if (needs.size() >= max_records * 2) return Malformed("too many version entries");
      const auto index = LoadLE<uint16_t>(*data, aux_offset + 6);
      const auto name = LoadLE<uint32_t>(*data, aux_offset + 8);
      const auto aux_next = LoadLE<uint32_t>(*data, aux_offset + 12);
      if (!index || !name || !aux_next) return Malformed("version entry outside the section");
      const auto version = CStringAt(*strings, *name);
      if (!version) return Malformed("bad version name offset");
      needs.push_back(VersionNeed{std::string(*library), std::string(*version), {}});
      indexes.push_back(*index & kVersionIndexMask);
      if (*aux_next == 0) break;
      aux_offset += *aux_next;
    }
    if (*next == 0) break;
    offset += *next;
  }
  AttachSymbols(elf, indexes, needs);
  return needs;
}

std::optional<DottedVersion> GlibcFloor(const std::vector<VersionNeed>& needs) {
  std::optional<DottedVersion> floor;
  for (const VersionNeed& need : needs) {
    const absl::string_view library = need.library;
    if (absl::StartsWith(library, "ld-linux") || absl::StartsWith(library, "ld64.so")) continue;
    auto split = SplitSymbolVersion(need.version);
    if (!split || split->first != "GLIBC" || split->second.parts.size() < 2) continue;
    // 2.2.5 means glibc 2.2: manylinux tags carry major and minor only.
    DottedVersion version{{split->second.parts[0], split->second.parts[1]}};
    if (!floor || *floor < version) floor = version;
  }
  return floor;
}

}  // namespace farm
