#include "libfarm/zip/zip_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "libfarm/zip/zip_archive.h"

namespace farm {
namespace {

constexpr uint32_t kMax32 = 0xFFFFFFFFu;
constexpr uint16_t kMax16 = 0xFFFFu;
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
constexpr uint16_t kVersionClassic = 20;
constexpr uint16_t kVersionZip64 = 45;
constexpr uint16_t kMadeByUnix = 3 << 8;
constexpr uint16_t kFlagUtf8 = 1 << 11;

class Bytes {
 public:
  void U16(uint16_t v) { Raw(&v, 2); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void Raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    data_.insert(data_.end(), b, b + n);
  }
  void Str(const std::string& s) { Raw(s.data(), s.size()); }
  const std::vector<uint8_t>& data() const { return data_; }

 private:
  std::vector<uint8_t> data_;
};

absl::StatusOr<std::vector<uint8_t>> Deflate(ByteSpan data, int level) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("deflateInit2 failed");
  }
  // deflateBound is the most the whole member can deflate to, so this rarely grows; it used to
  // add 512 MiB (zero-filled) for every member, however small.
  std::vector<uint8_t> out(deflateBound(&zs, data.size()));
  size_t in_done = 0;
  size_t out_done = 0;
  int rc = Z_OK;
  // zlib counts in uInt: feed gigabyte-sized members in slices.
  constexpr size_t kSlice = size_t{1} << 30;
  while (rc != Z_STREAM_END) {
    const size_t in_now = std::min(kSlice, data.size() - in_done);
    zs.next_in = const_cast<Bytef*>(data.data() + in_done);
    zs.avail_in = static_cast<uInt>(in_now);
    if (out_done == out.size()) out.resize(out.size() + std::max<size_t>(out.size() / 2, 4096));
    const size_t out_now = std::min(kSlice, out.size() - out_done);
    zs.next_out = out.data() + out_done;
    zs.avail_out = static_cast<uInt>(out_now);
    const bool last = in_done + in_now == data.size();
    rc = deflate(&zs, last ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      deflateEnd(&zs);
      return absl::InternalError(absl::StrCat("deflate failed: ", rc));
    }
    in_done += in_now - zs.avail_in;
    out_done += out_now - zs.avail_out;
  }
  deflateEnd(&zs);
  out.resize(out_done);
  return out;
}

uint32_t Crc32(ByteSpan data) {
  uLong crc = crc32_z(0L, Z_NULL, 0);
  return static_cast<uint32_t>(crc32_z(crc, data.data(), data.size()));
}

}  // namespace

absl::StatusOr<ZipWriter> ZipWriter::Create(const std::string& path,
                                            const ZipWriterOptions& options) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  return ZipWriter(file, path, options);
}

ZipWriter::ZipWriter(ZipWriter&& other) noexcept
    : file_(other.file_),
      path_(std::move(other.path_)),
      options_(other.options_),
      offset_(other.offset_),
      members_(std::move(other.members_)),
      finished_(other.finished_) {
  other.file_ = nullptr;
}

ZipWriter::~ZipWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status ZipWriter::Write(const void* data, size_t size) {
  if (size > 0 && std::fwrite(data, 1, size, file_) != size) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot write ", path_, ": ", std::strerror(errno), " (disk full?)"));
  }
  offset_ += size;
  return absl::OkStatus();
}

absl::Status ZipWriter::CheckNewMember(const std::string& name) const {
  if (file_ == nullptr || finished_) {
    return absl::FailedPreconditionError("zip writer already finished");
  }
  if (absl::Status s = CheckMemberPath(name); !s.ok()) return s;
  for (const Member& m : members_) {
    if (m.name == name) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate zip member ", name));
    }
  }
  return absl::OkStatus();
}

absl::Status ZipWriter::Add(const std::string& name, ByteSpan data, uint32_t unix_mode,
                            bool deflate) {
  if (absl::Status s = CheckNewMember(name); !s.ok()) return s;
  Member m;
  m.name = name;
  m.crc32 = Crc32(data);
  m.uncompressed_size = data.size();
  m.unix_mode = unix_mode & 07777;
  if (!deflate || data.empty()) return WriteMember(std::move(m), data);
  auto deflated = Deflate(data, options_.deflate_level);
  if (!deflated.ok()) return deflated.status();
  m.method = 8;
  return WriteMember(std::move(m), *deflated);
}

absl::Status ZipWriter::AddRaw(const std::string& name, const ZipArchive& source,
                               const ZipEntry& entry, uint32_t unix_mode) {
  if (absl::Status s = CheckNewMember(name); !s.ok()) return s;
  if (entry.method != 0 && entry.method != 8) {
    return absl::UnimplementedError(absl::StrCat(entry.name, " uses compression method ",
                                                 entry.method, " (only stored and deflate)"));
  }
  Member m;
  m.name = name;
  m.crc32 = entry.crc32;
  m.uncompressed_size = entry.uncompressed_size;
  m.method = entry.method;
  m.unix_mode = unix_mode & 07777;
  return WriteMember(std::move(m), source.RawBytes(entry));
}

absl::Status ZipWriter::WriteMember(Member m, ByteSpan payload) {
  m.offset = offset_;
  m.compressed_size = payload.size();
  const bool zip64 =
      options_.force_zip64 || m.uncompressed_size >= kMax32 || m.compressed_size >= kMax32;
  Bytes header;
  header.U32(0x04034b50);
  header.U16(zip64 ? kVersionZip64 : kVersionClassic);
  header.U16(kFlagUtf8);
  header.U16(m.method);
  header.U16(0);  // time 00:00
  header.U16(kDosDate1980);
  header.U32(m.crc32);
  header.U32(zip64 ? kMax32 : static_cast<uint32_t>(m.compressed_size));
  header.U32(zip64 ? kMax32 : static_cast<uint32_t>(m.uncompressed_size));
  header.U16(static_cast<uint16_t>(m.name.size()));
  header.U16(zip64 ? 20 : 0);
  header.Str(m.name);
  if (zip64) {
    header.U16(0x0001);
    header.U16(16);
    header.U64(m.uncompressed_size);
    header.U64(m.compressed_size);
  }
  if (absl::Status s = Write(header.data().data(), header.data().size()); !s.ok()) return s;
  if (absl::Status s = Write(payload.data(), payload.size()); !s.ok()) return s;
  members_.push_back(std::move(m));
  return absl::OkStatus();
}

absl::Status ZipWriter::Finish() {
  if (file_ == nullptr || finished_) {
    return absl::FailedPreconditionError("zip writer already finished");
  }
  finished_ = true;
  const uint64_t cd_offset = offset_;
  Bytes cd;
  for (const Member& m : members_) {
    const bool force = options_.force_zip64;
    const bool big_u = force || m.uncompressed_size >= kMax32;
    const bool big_c = force || m.compressed_size >= kMax32;
    const bool big_o = force || m.offset >= kMax32;
    Bytes extra;
    if (big_u || big_c || big_o) {
      extra.U16(0x0001);
      extra.U16(static_cast<uint16_t>(8 * (big_u + big_c + big_o)));
      // The spec's order: uncompressed size, compressed size, local header offset.
      if (big_u) extra.U64(m.uncompressed_size);
      if (big_c) extra.U64(m.compressed_size);
      if (big_o) extra.U64(m.offset);
    }
    const bool zip64 = !extra.data().empty();
    cd.U32(0x02014b50);
    cd.U16(kMadeByUnix | (zip64 ? kVersionZip64 : kVersionClassic));
    cd.U16(zip64 ? kVersionZip64 : kVersionClassic);
    cd.U16(kFlagUtf8);
    cd.U16(m.method);
    cd.U16(0);
    cd.U16(kDosDate1980);
    cd.U32(m.crc32);
    cd.U32(big_c ? kMax32 : static_cast<uint32_t>(m.compressed_size));
    cd.U32(big_u ? kMax32 : static_cast<uint32_t>(m.uncompressed_size));
    cd.U16(static_cast<uint16_t>(m.name.size()));
    cd.U16(static_cast<uint16_t>(extra.data().size()));
    cd.U16(0);                               // comment
    cd.U16(0);                               // disk
    cd.U16(0);                               // internal attributes
    cd.U32((0100000u | m.unix_mode) << 16);  // regular file + mode, as Unix zip writes it
    cd.U32(big_o ? kMax32 : static_cast<uint32_t>(m.offset));
    cd.Str(m.name);
    cd.Raw(extra.data().data(), extra.data().size());
  }
  if (absl::Status s = Write(cd.data().data(), cd.data().size()); !s.ok()) return s;
  const uint64_t cd_size = cd.data().size();
  const uint64_t count = members_.size();
  const bool zip64_end =
      options_.force_zip64 || count >= kMax16 || cd_size >= kMax32 || cd_offset >= kMax32;
  Bytes end;
  if (zip64_end) {
    const uint64_t end64_offset = offset_;
    end.U32(0x06064b50);
    end.U64(44);  // size of the rest of this record
    end.U16(kMadeByUnix | kVersionZip64);
    end.U16(kVersionZip64);
    end.U32(0);
    end.U32(0);
    end.U64(count);
    end.U64(count);
    end.U64(cd_size);
    end.U64(cd_offset);
    end.U32(0x07064b50);  // locator
    end.U32(0);
    end.U64(end64_offset);
    end.U32(1);
  }
  end.U32(0x06054b50);
  end.U16(0);
  end.U16(0);
  end.U16(zip64_end ? kMax16 : static_cast<uint16_t>(count));
  end.U16(zip64_end ? kMax16 : static_cast<uint16_t>(count));
  end.U32(zip64_end ? kMax32 : static_cast<uint32_t>(cd_size));
  end.U32(zip64_end ? kMax32 : static_cast<uint32_t>(cd_offset));
  end.U16(0);
  if (absl::Status s = Write(end.data().data(), end.data().size()); !s.ok()) return s;
  std::FILE* file = file_;
  file_ = nullptr;
  if (std::fflush(file) != 0 || std::fclose(file) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot finish ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace farm
