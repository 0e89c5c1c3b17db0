// Read-only zip archive (wheels): central directory, zip64, stored and deflated members.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libfarm/elf/byte_span.h"

namespace farm {

// Largest member a reader inflates into memory (libtorch_cuda.so, the largest wheel member
// seen, is ~1.5 GiB).
inline constexpr uint64_t kMaxInflatedSize = uint64_t{8} << 30;

// What one archive may make a reader inflate, checked by Open from the central directory
// before a byte is inflated. Every read holds a member to its declared size, so these bound
// the work of a full pass over any archive, whatever it claims.
struct ZipLimits {
  // All members together, uncompressed. Real CUDA wheels inflate to 1-2 GiB, a few to 3-4.
  uint64_t max_total_bytes = uint64_t{16} << 30;
  // Uncompressed bytes per archive byte, once the members declare more than the floor. Real
  // wheels (code, libraries, device code) inflate 2-5x; deflate's own bound is 1032x, so
  // without this a 16 MiB archive could ask for the whole total. 0: no ratio check.
  uint64_t max_ratio = 100;
  uint64_t ratio_floor_bytes = uint64_t{256} << 20;
};

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint16_t flags = 0;
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
  uint64_t data_offset = 0;  // where its stored bytes start, past the local header
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

  // Reads the central directory and every local header. `data` must outlive the archive.
  // Refused: duplicate member names (two members with one name let different tools see
  // different files), a local header whose name differs from the directory's, members whose
  // headers and data overlap or run into the central directory (how a zip bomb inflates one
  // stream many times), and archives over `limits`.
  static absl::StatusOr<ZipArchive> Open(ByteSpan data, const ZipLimits& limits = {});

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* Find(const std::string& name) const;

  // The member's uncompressed bytes, checked against its CRC-32 and declared size; error
  // when it would exceed `max_size`.
  absl::StatusOr<ZipMemberData> Read(const ZipEntry& entry, uint64_t max_size) const;

  // The same bytes and checks, handed to `sink` in pieces of at most 256 KiB: the member is
  // never held whole, whatever its size. The sink may have seen bytes of a member that then
  // fails its checks; an error from the sink ends the read with that error.
  using Sink = std::function<absl::Status(ByteSpan piece)>;
  absl::Status ReadTo(const ZipEntry& entry, const Sink& sink) const;

  // The member's bytes as stored (compressed, for a deflated member), for copying it into
  // another archive without inflating it. Open checked that they lie inside the archive.
  ByteSpan RawBytes(const ZipEntry& entry) const;

 private:
  absl::Status CheckReadable(const ZipEntry& entry) const;

  ByteSpan data_;
  std::vector<ZipEntry> entries_;
};

// Refuses member names that would leave the install directory or mean different files on
// different systems: absolute paths, "..", backslashes, drive letters, NUL, empty parts.
absl::Status CheckMemberPath(const std::string& name);

}  // namespace farm
