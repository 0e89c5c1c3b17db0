#include "libfarm/coverage/binary_inspector.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "libfarm/elf/ar_archive.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/fatbin/cubin_info.h"
#include "libfarm/zip/zip_archive.h"

namespace farm {
namespace {

InspectedContainer Summarize(const FatbinContainer& container, ContainerSection section,
                             ContainerOrigin origin) {
  InspectedContainer out;
  out.section = section;
  out.origin = origin;
  out.offset = container.offset;
  for (const FatbinEntry& e : container.entries) {
    out.entries.push_back(InspectedEntry{
        .kind = e.kind,
        .target = e.target,
        .arch = e.ArchName(),
        .compression = e.compression,
        .size = e.SizeInFile(),
        .uncompressed_size = e.compression == PayloadCompression::kNone ? 0 : e.uncompressed_size,
    });
  }
  return out;
}

InspectedFile InspectElf(ByteSpan data, const std::string& label) {
  InspectedFile file;
  file.path = label;
  auto elf = ElfFile::Parse(data);
  if (!elf.ok()) {
    file.error = std::string(elf.status().message());
    return file;
  }
  file.elf_type = elf->type();
  file.machine = elf->machine();
  if (elf->machine() == kElfMachineCuda) {
    // A bare cubin: the whole file is one SASS entry.
    file.format = BinaryFormat::kCubin;
    auto info = ReadCubinInfo(data);
    if (!info.ok()) {
      file.error = std::string(info.status().message());
      return file;
    }
    InspectedContainer c;
    c.entries.push_back(InspectedEntry{.kind = FatbinEntryKind::kCubin,
                                       .target = info->target,
                                       .arch = info->target.SmName(),
                                       .compression = PayloadCompression::kNone,
                                       .size = data.size(),
                                       .uncompressed_size = 0});
    file.containers.push_back(std::move(c));
    return file;
  }
  auto needs = ReadVersionNeeds(*elf);
  if (!needs.ok()) {
    file.error = std::string(needs.status().message());
    return file;
  }
  file.glibc = GlibcFloor(*needs);
  file.needs = *std::move(needs);
  auto device_code = ReadElfDeviceCode(*elf);
  if (!device_code.ok()) {
    file.error = std::string(device_code.status().message());
    return file;
  }
  for (const DeviceCodeContainer& dc : *device_code) {
    file.containers.push_back(Summarize(dc.container, dc.section, dc.origin));
  }
  return file;
}

}  // namespace

bool LooksLikeBinary(ByteSpan data) {
  return ElfFile::HasMagic(data) || HasArMagic(data) || HasFatbinMagic(data);
}

void InspectBinary(ByteSpan data, const std::string& label, Inspection& out) {
  if (ElfFile::HasMagic(data)) {
    out.files.push_back(InspectElf(data, label));
    return;
  }
  if (HasFatbinMagic(data)) {
    InspectedFile file;
    file.path = label;
    file.format = BinaryFormat::kFatbin;
    auto containers = ReadFatbinContainers(data);
    if (!containers.ok()) {
      file.error = std::string(containers.status().message());
    } else {
      for (const FatbinContainer& c : *containers) {
        file.containers.push_back(
            Summarize(c, ContainerSection::kFatbin, ContainerOrigin::kTranslationUnit));
      }
    }
    out.files.push_back(std::move(file));
    return;
  }
  if (HasArMagic(data)) {
    auto members = ReadArArchive(data);
    if (!members.ok()) {
      InspectedFile file;
      file.path = label;
      file.error = std::string(members.status().message());
      out.files.push_back(std::move(file));
      return;
    }
    for (const ArMember& m : *members) {
      if (LooksLikeBinary(m.data)) InspectBinary(m.data, absl::StrCat(label, "!", m.name), out);
    }
  }
}

absl::StatusOr<Inspection> InspectPath(const std::string& path) {
  auto mapped = MappedFile::Open(path);
  if (!mapped.ok()) return mapped.status();
  const ByteSpan data = mapped->bytes();
  Inspection inspection;
  if (LooksLikeBinary(data)) {
    InspectBinary(data, path, inspection);
    return inspection;
  }
  if (!ZipArchive::HasMagic(data)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        " is not an ELF file, static archive, fat binary or wheel; give a .so, .o, .a, "
        ".cubin, .fatbin or .whl"));
  }
  auto zip = ZipArchive::Open(data);
  if (!zip.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", zip.status().message()));
  }
  for (const ZipEntry& entry : zip->entries()) {
    if (entry.IsDirectory()) continue;
    auto member = zip->Read(entry, kMaxInflatedSize);
    const std::string label = absl::StrCat(path, "!", entry.name);
    if (!member.ok()) {
      InspectedFile file;
      file.path = label;
      file.error = std::string(member.status().message());
      inspection.files.push_back(std::move(file));
      continue;
    }
    if (LooksLikeBinary(member->bytes())) InspectBinary(member->bytes(), label, inspection);
  }
  return inspection;
}

}  // namespace farm
