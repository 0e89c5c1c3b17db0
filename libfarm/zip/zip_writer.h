// Writes zip archives (wheels): deflated or stored members, Unix modes, ZIP64 when an entry,
// offset or count outgrows the classic format. Timestamps are fixed (1980-01-01) so the
// same members give the same bytes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libfarm/elf/byte_span.h"
#include "libfarm/zip/zip_archive.h"

namespace farm {

struct ZipWriterOptions {
  // Write ZIP64 fields for every member even when not needed: lets tests exercise the ZIP64
  // layout without multi-gigabyte fixtures.
  bool force_zip64 = false;
  int deflate_level = 6;  // zlib level; wheel tools use 6 as well
};

class ZipWriter {
 public:
  // Creates (truncates) `path`.
  static absl::StatusOr<ZipWriter> Create(const std::string& path,
                                          const ZipWriterOptions& options = {});
  ZipWriter(ZipWriter&& other) noexcept;
  ZipWriter& operator=(ZipWriter&&) = delete;
  ~ZipWriter();

  // Adds a member. `name` must pass CheckMemberPath and be new; `unix_mode` holds permission
  // bits (0644, 0755); `deflate` false stores the bytes as they are.
  absl::Status Add(const std::string& name, ByteSpan data, uint32_t unix_mode = 0644,
                   bool deflate = true);

  // Adds `entry` of `source` under `name` as it is stored there: its compressed bytes, CRC-32
  // and sizes copied, nothing inflated or deflated again. For members a rewrite leaves
  // unchanged; the caller has read them once (ReadTo) so their CRC-32 is known good.
  absl::Status AddRaw(const std::string& name, const ZipArchive& source, const ZipEntry& entry,
                      uint32_t unix_mode = 0644);

  // Writes the central directory and closes the file. Nothing may be added afterwards.
  absl::Status Finish();

 private:
  struct Member {
    std::string name;
    uint32_t crc32 = 0;
    uint64_t compressed_size = 0;
    uint64_t uncompressed_size = 0;
    uint64_t offset = 0;
    uint16_t method = 0;
    uint32_t unix_mode = 0;
  };
  ZipWriter(std::FILE* file, std::string path, ZipWriterOptions options)
      : file_(file), path_(std::move(path)), options_(options) {}
  absl::Status Write(const void* data, size_t size);
  // Refuses a finished writer, an unsafe name or one already added.
  absl::Status CheckNewMember(const std::string& name) const;
  // Writes `m`'s local header and `payload` (its stored bytes) at the current offset.
  absl::Status WriteMember(Member m, ByteSpan payload);

  std::FILE* file_ = nullptr;
  std::string path_;
  ZipWriterOptions options_;
  uint64_t offset_ = 0;
  std::vector<Member> members_;
  bool finished_ = false;
};

}  // namespace farm
