#include "libfarm/fatbin/device_code.h"

#include <map>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "libfarm/fatbin/cubin_info.h"
#include "libfarm/fatbin/entry_payload.h"

namespace farm {
namespace {

constexpr uint32_t kWrapperMagic = 0x466243B1;
constexpr uint64_t kWrapperSize = 24;
constexpr uint64_t kRelaSize = 24;
constexpr uint64_t kSymbolSize = 24;
constexpr uint32_t kRelocX86_64Relative = 8;
constexpr uint32_t kRelocAarch64Relative = 1027;
constexpr uint64_t kMaxStubCubinSize = 64 << 20;

struct Wrapper {
  uint32_t version = 0;
  // Where its `data` pointer lands: section index and offset within that section.
  uint32_t section_index = 0;
  uint64_t section_offset = 0;
};

// R_*_RELATIVE addends of a linked ELF, by the address they patch. Linkers that do not
// write the addend into the patched field (aarch64 by default) leave only this record.
std::map<uint64_t, uint64_t> RelativeRelocations(const ElfFile& elf) {
  std::map<uint64_t, uint64_t> addends;
  for (const ElfSection& s : elf.sections()) {
    if (s.type != kSectionRela || s.name != ".rela.dyn") continue;
    auto data = elf.SectionData(s);
    if (!data.ok()) continue;
    for (uint64_t at = 0; at + kRelaSize <= data->size(); at += kRelaSize) {
      const uint32_t type = static_cast<uint32_t>(*LoadLE<uint64_t>(*data, at + 8));
      if (type != kRelocX86_64Relative && type != kRelocAarch64Relative) continue;
      addends[*LoadLE<uint64_t>(*data, at)] = *LoadLE<uint64_t>(*data, at + 16);
    }
  }
  return addends;
}

// In a relocatable object the `data` pointer is a relocation against a symbol (usually the
// .nv_fatbin section symbol) plus an addend.
std::optional<std::pair<uint32_t, uint64_t>> ResolveObjectPointer(const ElfFile& elf,
                                                                  const ElfSection& segment,
                                                                  uint64_t field_offset) {
  for (const ElfSection& rela : elf.sections()) {
    if (rela.type != kSectionRela || rela.info != segment.index) continue;
    auto data = elf.SectionData(rela);
    const ElfSection* symtab = elf.SectionAt(rela.link);
    if (!data.ok() || symtab == nullptr) continue;
    auto symbols = elf.SectionData(*symtab);
    if (!symbols.ok()) continue;
    for (uint64_t at = 0; at + kRelaSize <= data->size(); at += kRelaSize) {
      if (*LoadLE<uint64_t>(*data, at) != field_offset) continue;
      const uint64_t symbol = *LoadLE<uint64_t>(*data, at + 8) >> 32;
      const auto addend = *LoadLE<int64_t>(*data, at + 16);
      const auto shndx = LoadLE<uint16_t>(*symbols, symbol * kSymbolSize + 6);
      const auto value = LoadLE<uint64_t>(*symbols, symbol * kSymbolSize + 8);
      if (!shndx || !value) return std::nullopt;
      return std::make_pair(uint32_t{*shndx}, *value + static_cast<uint64_t>(addend));
    }
  }
  return std::nullopt;
}

std::vector<Wrapper> ReadWrappers(const ElfFile& elf) {
  std::vector<Wrapper> wrappers;
  const ElfSection* segment = elf.FindSection(".nvFatBinSegment");
  if (segment == nullptr) return wrappers;
  auto data = elf.SectionData(*segment);
  if (!data.ok()) return wrappers;
  const bool linked = elf.type() != kElfTypeRelocatable;
  const std::map<uint64_t, uint64_t> relative =
      linked ? RelativeRelocations(elf) : std::map<uint64_t, uint64_t>{};
  for (uint64_t at = 0; at + kWrapperSize <= data->size(); at += kWrapperSize) {
    if (*LoadLE<uint32_t>(*data, at) != kWrapperMagic) continue;
    Wrapper w;
    w.version = *LoadLE<uint32_t>(*data, at + 4);
    if (linked) {
      uint64_t address = *LoadLE<uint64_t>(*data, at + 8);
      if (address == 0) {
        auto it = relative.find(segment->address + at + 8);
        if (it == relative.end()) continue;
        address = it->second;
      }
      for (const ElfSection& s : elf.sections()) {
        if (s.address != 0 && address >= s.address && address - s.address < s.size) {
          w.section_index = s.index;
          w.section_offset = address - s.address;
        }
      }
    } else {
      auto target = ResolveObjectPointer(elf, *segment, at + 8);
      if (!target) continue;
      w.section_index = target->first;
      w.section_offset = target->second;
    }
    if (w.section_index != 0) wrappers.push_back(w);
  }
  return wrappers;
}

// A device-link container none of whose cubins holds a function.
bool IsCodeFreeDeviceLink(const FatbinContainer& container) {
  for (const FatbinEntry& entry : container.entries) {
    if (entry.kind != FatbinEntryKind::kCubin) return false;
    auto bytes = DecompressEntryPayload(entry, kMaxStubCubinSize);
    if (!bytes.ok()) return false;
    auto info = ReadCubinInfo(ByteSpan(*bytes));
    if (!info.ok() || info->has_code) return false;
  }
  return !container.entries.empty();
}

}  // namespace

std::string ContainerSectionName(ContainerSection section) {
  return section == ContainerSection::kFatbin ? ".nv_fatbin" : "__nv_relfatbin";
}

std::string ContainerOriginName(ContainerOrigin origin) {
  switch (origin) {
    case ContainerOrigin::kDeviceLink:
      return "device-link";
    case ContainerOrigin::kDeviceLinkStub:
      return "device-link-stub";
    case ContainerOrigin::kTranslationUnit:
      break;
  }
  return "translation-unit";
}

absl::StatusOr<std::vector<DeviceCodeContainer>> ReadElfDeviceCode(const ElfFile& elf) {
  std::vector<DeviceCodeContainer> result;
  const std::vector<Wrapper> wrappers = ReadWrappers(elf);
  for (const ElfSection& s : elf.sections()) {
    ContainerSection kind;
    if (s.name == ".nv_fatbin") {
      kind = ContainerSection::kFatbin;
    } else if (s.name == "__nv_relfatbin") {
      kind = ContainerSection::kRelocatable;
    } else {
      continue;
    }
    auto data = elf.SectionData(s);
    if (!data.ok()) return data.status();
    auto containers = ReadFatbinContainers(*data);
    if (!containers.ok()) {
      return absl::Status(
          containers.status().code(),
          absl::StrCat("section ", std::string(s.name), ": ", containers.status().message()));
    }
    for (FatbinContainer& c : *containers) {
      DeviceCodeContainer dc;
      dc.section = kind;
      for (const Wrapper& w : wrappers) {
        if (w.section_index == s.index && w.section_offset == c.offset && w.version >= 2) {
          dc.origin = IsCodeFreeDeviceLink(c) ? ContainerOrigin::kDeviceLinkStub
                                              : ContainerOrigin::kDeviceLink;
        }
      }
      // Report offsets within the file rather than within the section.
      c.offset += s.offset;
      for (FatbinEntry& e : c.entries) e.offset += s.offset;
      dc.container = std::move(c);
      result.push_back(std::move(dc));
    }
  }
  return result;
}

}  // namespace farm
