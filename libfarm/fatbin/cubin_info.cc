#include "libfarm/fatbin/cubin_info.h"

#include <string_view>

#include "absl/status/status.h"
#include "libfarm/elf/elf_file.h"

namespace farm {
namespace {

// The `-arch sm_XXv` option recorded by ptxas in .note.nv.tkinfo.
ArchVariant VariantFromToolkitNote(const ElfFile& elf, int sm) {
  const ElfSection* note = elf.FindSection(".note.nv.tkinfo");
  if (note == nullptr) return ArchVariant::kGeneric;
  auto data = elf.SectionData(*note);
  if (!data.ok()) return ArchVariant::kGeneric;
  const std::string_view text = AsChars(*data);
  const std::string needle = "-arch sm_" + std::to_string(sm);
  const size_t at = text.find(needle);
  if (at == std::string_view::npos || at + needle.size() >= text.size()) {
    return ArchVariant::kGeneric;
  }
  const char suffix = text[at + needle.size()];
  if (suffix == 'a') return ArchVariant::kArchSpecific;
  if (suffix == 'f') return ArchVariant::kFamily;
  return ArchVariant::kGeneric;
}

}  // namespace

bool IsCubin(ByteSpan data) {
  const auto machine = LoadLE<uint16_t>(data, 0x12);
  return ElfFile::HasMagic(data) && machine && *machine == kElfMachineCuda;
}

absl::StatusOr<CubinInfo> ReadCubinInfo(ByteSpan data) {
  auto elf = ElfFile::Parse(data);
  if (!elf.ok()) return elf.status();
  if (elf->machine() != kElfMachineCuda) {
    return absl::InvalidArgumentError("not a cubin (e_machine is not EM_CUDA)");
  }
  CubinInfo info;
  const uint32_t flags = elf->flags();
  if (elf->abi_version() >= 8) {
    info.target.sm = static_cast<int>((flags >> 8) & 0xff);
    info.target.variant = VariantFromToolkitNote(*elf, info.target.sm);
  } else {
    info.target.sm = static_cast<int>(flags & 0xff);
    info.target.variant = (flags & 0x800) != 0 ? ArchVariant::kArchSpecific
                                               : VariantFromToolkitNote(*elf, info.target.sm);
  }
  info.relocatable = elf->type() == kElfTypeRelocatable;
  for (const ElfSection& s : elf->sections()) {
    if (s.name.substr(0, 6) == ".text." && s.size > 0) info.has_code = true;
  }
  return info;
}

}  // namespace farm
