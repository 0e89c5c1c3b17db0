#include "libfarm/fatbin/fatbin_reader.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace farm {
namespace {

constexpr uint32_t kOldStyleMagic = 0x1EE55A01;
constexpr uint16_t kContainerHeaderSize = 0x10;
constexpr uint32_t kMinEntryHeaderSize = 0x40;
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;
constexpr uint64_t kFlagArchSpecific = 0x100000;
constexpr uint64_t kFlagFamily = 0x200000;

absl::Status Malformed(uint64_t offset, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("malformed fat binary at offset 0x%x: %s", offset, what));
}

absl::StatusOr<FatbinEntry> ReadEntry(ByteSpan data, uint64_t offset, uint64_t end) {
  FatbinEntry entry;
  entry.offset = offset;
  const auto header = SubSpan(data, offset, kMinEntryHeaderSize);
  if (!header || end - offset < kMinEntryHeaderSize) {
    return Malformed(offset, "entry header runs past the container");
  }
  entry.raw_kind = *LoadLE<uint16_t>(*header, 0x00);
  entry.header_size = *LoadLE<uint32_t>(*header, 0x04);
  entry.stored_size = *LoadLE<uint64_t>(*header, 0x08);
  entry.compressed_size = *LoadLE<uint32_t>(*header, 0x10);
  entry.version_minor = *LoadLE<uint16_t>(*header, 0x18);
  entry.version_major = *LoadLE<uint16_t>(*header, 0x1a);
  entry.target.sm = static_cast<int>(*LoadLE<uint32_t>(*header, 0x1c));
  entry.flags = *LoadLE<uint64_t>(*header, 0x28);
  entry.uncompressed_size = *LoadLE<uint64_t>(*header, 0x38);

  if (entry.header_size < kMinEntryHeaderSize) {
    return Malformed(offset, absl::StrCat("entry header size ", entry.header_size, " < 64"));
  }
  if (entry.header_size > end - offset || entry.stored_size > end - offset - entry.header_size) {
    return Malformed(offset, "entry runs past the end of its container");
  }
  switch (entry.raw_kind) {
    case 1:
      entry.kind = FatbinEntryKind::kPtx;
      break;
    case 2:
      entry.kind = FatbinEntryKind::kCubin;
      break;
    case 8:
      entry.kind = FatbinEntryKind::kLtoIr;
      break;
    default:
      entry.kind = FatbinEntryKind::kUnknown;
  }
  const bool arch_specific = (entry.flags & kFlagArchSpecific) != 0;
  const bool family = (entry.flags & kFlagFamily) != 0;
  if (arch_specific && family) return Malformed(offset, "entry flagged both `a` and `f`");
  entry.target.variant = arch_specific ? ArchVariant::kArchSpecific
                         : family      ? ArchVariant::kFamily
                                       : ArchVariant::kGeneric;
  const bool lz4 = (entry.flags & kFlagLz4) != 0;
  const bool zstd = (entry.flags & kFlagZstd) != 0;
  if (lz4 && zstd) return Malformed(offset, "entry flagged both LZ4 and ZSTD");
  entry.compression = lz4    ? PayloadCompression::kLz4
                      : zstd ? PayloadCompression::kZstd
                             : PayloadCompression::kNone;
  uint64_t payload_size = entry.stored_size;
  if (entry.compression != PayloadCompression::kNone) {
    if (entry.compressed_size > entry.stored_size) {
      return Malformed(offset, "compressed size exceeds the stored payload");
    }
    payload_size = entry.compressed_size;
  }
  entry.payload = data.subspan(offset + entry.header_size, payload_size);
  return entry;
}

}  // namespace

std::string FatbinEntryKindName(FatbinEntryKind kind) {
  switch (kind) {
    case FatbinEntryKind::kPtx:
      return "ptx";
    case FatbinEntryKind::kCubin:
      return "cubin";
    case FatbinEntryKind::kLtoIr:
      return "lto";
    case FatbinEntryKind::kUnknown:
      break;
  }
  return "unknown";
}

std::string PayloadCompressionName(PayloadCompression kind) {
  switch (kind) {
    case PayloadCompression::kLz4:
      return "lz4";
    case PayloadCompression::kZstd:
      return "zstd";
    case PayloadCompression::kNone:
      break;
  }
  return "";
}

std::string FatbinEntry::ArchName() const {
  switch (kind) {
    case FatbinEntryKind::kPtx:
      return target.ComputeName();
    case FatbinEntryKind::kLtoIr:
      return absl::StrCat("lto_", target.sm, target.Suffix());
    case FatbinEntryKind::kCubin:
    case FatbinEntryKind::kUnknown:
      break;
  }
  return target.SmName();
}

bool HasFatbinMagic(ByteSpan data) {
  const auto magic = LoadLE<uint32_t>(data, 0);
  return magic && *magic == kFatbinContainerMagic;
}

absl::StatusOr<FatbinContainer> ReadFatbinContainer(ByteSpan data, uint64_t offset) {
  const auto magic = LoadLE<uint32_t>(data, offset);
  const auto header_size = LoadLE<uint16_t>(data, offset + 6);
  const auto fat_size = LoadLE<uint64_t>(data, offset + 8);
  if (!magic || !header_size || !fat_size) return Malformed(offset, "truncated container header");
  if (*magic == kOldStyleMagic) {
    return absl::UnimplementedError(absl::StrFormat(
        "pre-CUDA-4 fat binary (magic 0x%08x) at offset 0x%x is not supported", *magic, offset));
  }
  if (*magic != kFatbinContainerMagic) {
    return Malformed(offset, absl::StrFormat("magic 0x%08x is not 0xba55ed50", *magic));
  }
  if (*header_size < kContainerHeaderSize) return Malformed(offset, "container header too small");
  if (*header_size > data.size() - offset || *fat_size > data.size() - offset - *header_size) {
    return Malformed(offset, "container runs past the end of its section");
  }
  FatbinContainer container;
  container.offset = offset;
  container.size = *header_size + *fat_size;
  const uint64_t end = offset + container.size;
  uint64_t at = offset + *header_size;
  while (at < end) {
    auto entry = ReadEntry(data, at, end);
    if (!entry.ok()) return entry.status();
    at += entry->header_size + entry->stored_size;  // header_size >= 64: always advances
    container.entries.push_back(*std::move(entry));
  }
  return container;
}

absl::StatusOr<std::vector<FatbinContainer>> ReadFatbinContainers(ByteSpan data) {
  std::vector<FatbinContainer> containers;
  uint64_t offset = 0;
  while (offset < data.size()) {
    const auto word = LoadLE<uint32_t>(data, offset);
    if (!word) {
      if (data[offset] != 0) return Malformed(offset, "trailing bytes after the last container");
      ++offset;
      continue;
    }
    if (*word == 0) {  // alignment padding between containers
      offset += 4;
      continue;
    }
    auto container = ReadFatbinContainer(data, offset);
    if (!container.ok()) return container.status();
    offset += container->size;
    containers.push_back(*std::move(container));
  }
  return containers;
}

}  // namespace farm
