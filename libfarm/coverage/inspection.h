// What `farmctl inspect` reports: every ELF found in a path (library, object, archive,
// cubin, fat binary or wheel) with its device code and glibc needs. Plain data, no views
// into the inspected bytes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libfarm/cuda/arch_list.h"
#include "libfarm/elf/version_needs.h"
#include "libfarm/fatbin/device_code.h"
#include "libfarm/fatbin/fatbin_reader.h"

namespace farm {

struct InspectedEntry {
  FatbinEntryKind kind = FatbinEntryKind::kUnknown;
  CudaTarget target;
  std::string arch;  // "sm_90a", "compute_121", "lto_90"
  PayloadCompression compression = PayloadCompression::kNone;
  uint64_t size = 0;               // bytes in the file
  uint64_t uncompressed_size = 0;  // 0 when not compressed
};

struct InspectedContainer {
  ContainerSection section = ContainerSection::kFatbin;
  ContainerOrigin origin = ContainerOrigin::kTranslationUnit;
  uint64_t offset = 0;  // in the ELF
  std::vector<InspectedEntry> entries;

  // What the CUDA runtime registers (.nv_fatbin). __nv_relfatbin images are -rdc/LTO inputs
  // for a later device link: the GPU never sees them, whatever archs they hold.
  bool Loadable() const { return section == ContainerSection::kFatbin; }
};

enum class BinaryFormat { kElf, kCubin, kFatbin };

struct InspectedFile {
  std::string path;  // "wheel.whl!pkg/lib.so", "libx.a!k.o"
  BinaryFormat format = BinaryFormat::kElf;
  uint16_t elf_type = 0;
  uint16_t machine = 0;
  std::optional<DottedVersion> glibc;  // highest GLIBC_x.y needed
  std::vector<VersionNeed> needs;
  std::vector<InspectedContainer> containers;
  std::string error;  // set when the file could not be read; nothing else is then valid

  bool HasDeviceCode() const;
};

struct Inspection {
  std::vector<InspectedFile> files;

  // Bytes per arch name over the loadable containers of every file.
  std::map<std::string, uint64_t> ArchTotals() const;
  // The same over link-time inputs (__nv_relfatbin), kept apart.
  std::map<std::string, uint64_t> LinkTimeArchTotals() const;
  bool HasErrors() const;
};

// Bytes per arch name of one file's loadable containers, or of its link-time inputs.
std::map<std::string, uint64_t> FileArchTotals(const InspectedFile& file);
std::map<std::string, uint64_t> FileLinkTimeArchTotals(const InspectedFile& file);

}  // namespace farm
