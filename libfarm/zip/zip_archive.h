// Read-only zip archive (wheels): central directory, zip64, stored and deflated members.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libfarm/elf/byte_span.h"

namespace farm {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint16_t flags = 0;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
  uint16_t made_by = 0;
  uint32_t external_attributes = 0;

  bool IsDirectory() const { return !name.empty() && name.back() == '/'; }
  // A Unix symlink stored as a member (S_IFLNK in the high 16 bits of the attributes).
  bool IsSymlink() const;
  bool IsEncrypted() const { return (flags & 0x1) != 0; }
};

// A member's uncompressed bytes: a view into the archive for stored members, an owned
// buffer for deflated ones.
class ZipMemberData {
 public:
  ZipMemberData() = default;
  explicit ZipMemberData(ByteSpan view) : view_(view) {}
  explicit ZipMemberData(std::vector<uint8_t> owned) : owned_(std::move(owned)), view_(owned_) {}
  ZipMemberData(ZipMemberData&& other) noexcept { *this = std::move(other); }
  ZipMemberData& operator=(ZipMemberData&& other) noexcept;

  ByteSpan bytes() const { return view_; }

 private:
  std::vector<uint8_t> owned_;
  ByteSpan view_;
};

class ZipArchive {
 public:
  static bool HasMagic(ByteSpan data);

  // Reads the central directory. `data` must outlive the archive. Duplicate member names are
  // refused: two members with one name let different tools see different files.
  static absl::StatusOr<ZipArchive> Open(ByteSpan data);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* Find(const std::string& name) const;

  // The member's uncompressed bytes, checked against its CRC-32 and declared size; error
  // when it would exceed `max_size`.
  absl::StatusOr<ZipMemberData> Read(const ZipEntry& entry, uint64_t max_size) const;

 private:
  absl::StatusOr<ByteSpan> StoredBytes(const ZipEntry& entry) const;

  ByteSpan data_;
  std::vector<ZipEntry> entries_;
};

// Refuses member names that would leave the install directory or mean different files on
// different systems: absolute paths, "..", backslashes, drive letters, NUL, empty parts.
absl::Status CheckMemberPath(const std::string& name);

}  // namespace farm
