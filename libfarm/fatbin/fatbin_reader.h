// Fat-binary containers (magic 0xBA55ED50) and their entries, read from headers only.
// Layout as nvcc 12.x/13.0 write it (the container's magic is in fatbinary_section.h): a
// 16-byte container header (magic, version, header size, payload size), then entries, each a
// header of at least 64 bytes (kind, header size, payload size, flags, SM, version) and its
// payload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/elf/byte_span.h"

namespace farm {

inline constexpr uint32_t kFatbinContainerMagic = 0xBA55ED50;

enum class FatbinEntryKind { kPtx, kCubin, kLtoIr, kUnknown };
enum class PayloadCompression { kNone, kLz4, kZstd };

std::string FatbinEntryKindName(FatbinEntryKind kind);        // "ptx", "cubin", "lto", "unknown"
std::string PayloadCompressionName(PayloadCompression kind);  // "", "lz4", "zstd"

struct FatbinEntry {
  FatbinEntryKind kind = FatbinEntryKind::kUnknown;
  uint16_t raw_kind = 0;
  CudaTarget target;  // SM from the header, a/f variant from the flags
  PayloadCompression compression = PayloadCompression::kNone;
  uint64_t flags = 0;
  uint64_t offset = 0;  // of the entry header, within the span that was parsed
  uint32_t header_size = 0;
  uint64_t stored_size = 0;        // payload bytes in the file, padded to 8
  uint64_t compressed_size = 0;    // exact size when compressed, else 0
  uint64_t uncompressed_size = 0;  // when compressed, else 0
  uint16_t version_major = 0;      // PTX ISA version for PTX, ELF format version for cubins
  uint16_t version_minor = 0;
  ByteSpan payload;  // the stored bytes: exactly compressed_size long when compressed

  // "sm_90a" for cubins, "compute_90a" for PTX, "lto_90" for LTO IR.
  std::string ArchName() const;
  // Bytes the payload occupies in the file: what a wheel pays for this arch.
  uint64_t SizeInFile() const {
    return compression == PayloadCompression::kNone ? stored_size : compressed_size;
  }
  bool debug() const { return (flags & 0x2) != 0; }
};

struct FatbinContainer {
  uint64_t offset = 0;  // within the span that was parsed
  uint64_t size = 0;    // header plus entries
  std::vector<FatbinEntry> entries;
};

bool HasFatbinMagic(ByteSpan data);

// The container that starts at `offset` of `data`.
absl::StatusOr<FatbinContainer> ReadFatbinContainer(ByteSpan data, uint64_t offset);

// Every container in `data`, which holds them back to back (a .nv_fatbin section, a
// __nv_relfatbin section or an `nvcc -fatbin` file); zero padding between them is allowed,
// anything else is an error.
absl::StatusOr<std::vector<FatbinContainer>> ReadFatbinContainers(ByteSpan data);

}  // namespace farm
