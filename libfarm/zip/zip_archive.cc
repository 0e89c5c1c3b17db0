#include "libfarm/zip/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace farm {
namespace {

constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr uint32_t kZip64EndLocator = 0x07064b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint64_t kEndSize = 22;
constexpr uint64_t kCentralHeaderSize = 46;
constexpr uint64_t kLocalHeaderSize = 30;
constexpr uint64_t kMaxComment = 0xffff;

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed zip: ", what));
}

// Applies the zip64 extra field (id 1) to the fields that were saturated at 0xffffffff.
// Deflate's largest expansion, and room for the empty streams' few bytes.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr uint64_t kDeflateSlack = 64;

// Inflates a raw deflate stream that must yield exactly `declared` bytes. The buffer grows
// with what actually comes out (doubling from 64 KiB), so a member lying about its size
// costs what it really inflates to, never what it declares.
absl::StatusOr<std::vector<uint8_t>> Inflate(ByteSpan in, uint64_t declared) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return absl::InternalError("inflateInit2 failed");
  // One spare byte tells "inflates to more than declared" apart from "exactly declared".
  const uint64_t limit = declared + 1;
  std::vector<uint8_t> out(std::min<uint64_t>(limit, uint64_t{64} << 10));
  uint64_t in_done = 0, out_done = 0;
  int rc = Z_OK;
  // zlib counts in 32-bit units: feed and drain in chunks.
  constexpr uint64_t kChunk = 1u << 30;
  while (true) {
    if (out_done == out.size() && out.size() < limit) {
      out.resize(std::min<uint64_t>(limit, out.size() * 2));
    }
    zs.next_in = const_cast<Bytef*>(in.data() + in_done);
    zs.avail_in = static_cast<uInt>(std::min(kChunk, in.size() - in_done));
    zs.next_out = out.data() + out_done;
    zs.avail_out = static_cast<uInt>(std::min(kChunk, out.size() - out_done));
    const uInt in_before = zs.avail_in, out_before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    const uint64_t consumed = in_before - zs.avail_in, produced = out_before - zs.avail_out;
    in_done += consumed;
    out_done += produced;
    if (rc != Z_OK || (consumed == 0 && produced == 0)) break;
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || out_done != declared) {
    return absl::DataLossError("wrong inflated size");
  }
  out.resize(out_done);
  return out;
}

absl::Status ApplyZip64Extra(ByteSpan extra, ZipEntry& entry) {
  const bool need_size = entry.uncompressed_size == 0xffffffff;
  const bool need_compressed = entry.compressed_size == 0xffffffff;
  const bool need_offset = entry.local_header_offset == 0xffffffff;
  if (!need_size && !need_compressed && !need_offset) return absl::OkStatus();
  uint64_t at = 0;
  while (at + 4 <= extra.size()) {
    const uint16_t id = *LoadLE<uint16_t>(extra, at);
    const uint16_t size = *LoadLE<uint16_t>(extra, at + 2);
    const auto body = SubSpan(extra, at + 4, size);
    if (!body) return Malformed(absl::StrCat("extra field of ", entry.name, " overruns"));
    if (id == 0x0001) {
      uint64_t pos = 0;
      auto next = [&](uint64_t& field) -> bool {
        const auto v = LoadLE<uint64_t>(*body, pos);
        if (!v) return false;
        field = *v;
        pos += 8;
        return true;
      };
      if ((need_size && !next(entry.uncompressed_size)) ||
          (need_compressed && !next(entry.compressed_size)) ||
          (need_offset && !next(entry.local_header_offset))) {
        return Malformed(absl::StrCat("zip64 field of ", entry.name, " too short"));
      }
      return absl::OkStatus();
    }
    at += 4 + size;
  }
  return Malformed(absl::StrCat(entry.name, " needs a zip64 extra field and has none"));
}

}  // namespace

bool ZipEntry::IsSymlink() const {
  constexpr uint16_t kUnix = 3;
  return (made_by >> 8) == kUnix && ((external_attributes >> 16) & 0170000) == 0120000;
}

ZipMemberData& ZipMemberData::operator=(ZipMemberData&& other) noexcept {
  if (this == &other) return *this;
  const bool owned = other.view_.data() == other.owned_.data() && !other.owned_.empty();
  owned_ = std::move(other.owned_);
  view_ = owned ? ByteSpan(owned_) : other.view_;
  other.view_ = ByteSpan();
  return *this;
}

bool ZipArchive::HasMagic(ByteSpan data) {
  const auto sig = LoadLE<uint32_t>(data, 0);
  return sig && (*sig == kLocalHeader || *sig == kEndOfCentralDirectory);
}

absl::StatusOr<ZipArchive> ZipArchive::Open(ByteSpan data) {
  if (data.size() < kEndSize) return Malformed("shorter than an end-of-central-directory record");
  // The end record sits in the last 22 + 65535 bytes; search backwards for one whose comment
  // length reaches exactly to the end of the file.
  std::optional<uint64_t> end;
  const uint64_t lowest =
      data.size() > kEndSize + kMaxComment ? data.size() - kEndSize - kMaxComment : 0;
  for (uint64_t at = data.size() - kEndSize + 1; at-- > lowest;) {
    if (*LoadLE<uint32_t>(data, at) == kEndOfCentralDirectory &&
        at + kEndSize + *LoadLE<uint16_t>(data, at + 20) == data.size()) {
      end = at;
      break;
    }
  }
  if (!end) return Malformed("no end-of-central-directory record (not a zip file?)");
  uint64_t count = *LoadLE<uint16_t>(data, *end + 10);
  uint64_t cd_size = *LoadLE<uint32_t>(data, *end + 12);
  uint64_t cd_offset = *LoadLE<uint32_t>(data, *end + 16);
  if (*LoadLE<uint16_t>(data, *end + 4) != 0 || *LoadLE<uint16_t>(data, *end + 6) != 0) {
    return absl::UnimplementedError("multi-disk zip archives are not supported");
  }
  if (*end >= 20 && *LoadLE<uint32_t>(data, *end - 20) == kZip64EndLocator) {
    const uint64_t z64 = *LoadLE<uint64_t>(data, *end - 20 + 8);
    const auto sig = LoadLE<uint32_t>(data, z64);
    if (!sig || *sig != kZip64End || !LoadLE<uint64_t>(data, z64 + 48)) {
      return Malformed("bad zip64 end-of-central-directory record");
    }
    count = *LoadLE<uint64_t>(data, z64 + 32);
    cd_size = *LoadLE<uint64_t>(data, z64 + 40);
    cd_offset = *LoadLE<uint64_t>(data, z64 + 48);
  }
  const auto directory = SubSpan(data, cd_offset, cd_size);
  if (!directory) return Malformed("central directory lies outside the file");
  if (count > cd_size / kCentralHeaderSize) {
    return Malformed("more entries than fit in the central directory");
  }
  ZipArchive archive;
  archive.data_ = data;
  archive.entries_.reserve(count);
  std::set<std::string> names;
  uint64_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const auto header = SubSpan(*directory, at, kCentralHeaderSize);
    if (!header || *LoadLE<uint32_t>(*header, 0) != kCentralHeader) {
      return Malformed(absl::StrCat("bad central directory header #", i));
    }
    ZipEntry entry;
    entry.made_by = *LoadLE<uint16_t>(*header, 4);
    entry.flags = *LoadLE<uint16_t>(*header, 8);
    entry.method = *LoadLE<uint16_t>(*header, 10);
    entry.crc32 = *LoadLE<uint32_t>(*header, 16);
    entry.compressed_size = *LoadLE<uint32_t>(*header, 20);
    entry.uncompressed_size = *LoadLE<uint32_t>(*header, 24);
    const uint16_t name_size = *LoadLE<uint16_t>(*header, 28);
    const uint16_t extra_size = *LoadLE<uint16_t>(*header, 30);
    const uint16_t comment_size = *LoadLE<uint16_t>(*header, 32);
    entry.external_attributes = *LoadLE<uint32_t>(*header, 38);
    entry.local_header_offset = *LoadLE<uint32_t>(*header, 42);
    const auto name = SubSpan(*directory, at + kCentralHeaderSize, name_size);
    const auto extra = SubSpan(*directory, at + kCentralHeaderSize + name_size, extra_size);
    if (!name || !extra)
      return Malformed(absl::StrCat("central directory entry #", i, " overruns"));
    entry.name = std::string(AsChars(*name));
    if (absl::Status s = ApplyZip64Extra(*extra, entry); !s.ok()) return s;
    if (!names.insert(entry.name).second) {
      return Malformed(absl::StrCat("duplicate member \"", entry.name,
                                    "\": tools disagree on which copy counts"));
    }
    archive.entries_.push_back(std::move(entry));
    at += kCentralHeaderSize + name_size + extra_size + comment_size;
  }
  return archive;
}

const ZipEntry* ZipArchive::Find(const std::string& name) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

absl::StatusOr<ByteSpan> ZipArchive::StoredBytes(const ZipEntry& entry) const {
  const auto header = SubSpan(data_, entry.local_header_offset, kLocalHeaderSize);
  if (!header || *LoadLE<uint32_t>(*header, 0) != kLocalHeader) {
    return Malformed(absl::StrCat("bad local header for ", entry.name));
  }
  const uint16_t name_size = *LoadLE<uint16_t>(*header, 26);
  const uint16_t extra_size = *LoadLE<uint16_t>(*header, 28);
  const auto local_name = SubSpan(data_, entry.local_header_offset + kLocalHeaderSize, name_size);
  if (!local_name || AsChars(*local_name) != entry.name) {
    // A local name that differs from the directory is how zip-confusion attacks hide files.
    return Malformed(
        absl::StrCat("local header name of ", entry.name, " differs from the central directory"));
  }
  const auto bytes =
      SubSpan(data_, entry.local_header_offset + kLocalHeaderSize + name_size + extra_size,
              entry.compressed_size);
  if (!bytes) return Malformed(absl::StrCat("data of ", entry.name, " runs past the end"));
  return *bytes;
}

absl::StatusOr<ZipMemberData> ZipArchive::Read(const ZipEntry& entry, uint64_t max_size) const {
  if (entry.IsEncrypted()) {
    return absl::UnimplementedError(absl::StrCat(entry.name, " is encrypted"));
  }
  if (entry.uncompressed_size > max_size) {
    return absl::ResourceExhaustedError(absl::StrCat(entry.name, " is ", entry.uncompressed_size,
                                                     " bytes uncompressed, over the limit of ",
                                                     max_size));
  }
  auto stored = StoredBytes(entry);
  if (!stored.ok()) return stored.status();
  ZipMemberData result;
  if (entry.method == 0) {
    if (entry.compressed_size != entry.uncompressed_size) {
      return Malformed(absl::StrCat("stored member ", entry.name, " has two different sizes"));
    }
    result = ZipMemberData(*stored);
  } else if (entry.method == 8) {
    // Deflate cannot expand more than 1032:1 (RFC 1951's longest match per 2-bit code), so a
    // larger declared size is a lie made to provoke a huge allocation.
    if (entry.uncompressed_size > entry.compressed_size * kMaxDeflateRatio + kDeflateSlack) {
      return Malformed(absl::StrCat(entry.name, " declares ", entry.uncompressed_size,
                                    " bytes from ", entry.compressed_size,
                                    " compressed; deflate cannot expand that much"));
    }
    auto inflated = Inflate(*stored, entry.uncompressed_size);
    if (!inflated.ok()) {
      return Malformed(absl::StrCat(entry.name, " does not inflate to its declared ",
                                    entry.uncompressed_size, " bytes"));
    }
    result = ZipMemberData(*std::move(inflated));
  } else {
    return absl::UnimplementedError(absl::StrCat(entry.name, " uses compression method ",
                                                 entry.method, " (only stored and deflate)"));
  }
  uLong crc = crc32_z(0L, Z_NULL, 0);
  crc = crc32_z(crc, result.bytes().data(), result.bytes().size());
  if (crc != entry.crc32) return Malformed(absl::StrCat(entry.name, " fails its CRC-32 check"));
  return result;
}

absl::Status CheckMemberPath(const std::string& name) {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("unsafe member path \"", name, "\": ", why));
  };
  if (name.empty()) return refuse("empty name");
  if (name.find('\0') != std::string::npos) return refuse("contains a NUL byte");
  if (name.find('\\') != std::string::npos) return refuse("contains a backslash");
  if (name[0] == '/') return refuse("absolute path");
  if (name.size() >= 2 && name[1] == ':') return refuse("drive letter");
  const bool directory = name.back() == '/';
  const std::string_view body(name.data(), name.size() - (directory ? 1 : 0));
  for (absl::string_view part : absl::StrSplit(absl::string_view(body.data(), body.size()), '/')) {
    if (part == "..") return refuse("\"..\" leaves the install directory");
    if (part.empty() || part == ".") return refuse("empty or \".\" path component");
  }
  return absl::OkStatus();
}

}  // namespace farm
