#include "libfarm/zip/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <set>

#include "absl/cleanup/cleanup.h"
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

// Deflate's largest expansion, and room for the empty streams' few bytes.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr uint64_t kDeflateSlack = 64;
// What ReadTo hands its sink at a time, and all it holds.
constexpr uint64_t kPieceSize = 256 << 10;

// Inflates a raw deflate stream that must yield exactly `declared` bytes, a piece at a time.
// It stops at the first byte past `declared`, so a member lying about its size costs at
// most what it declares, and it holds one piece, never the member.
absl::Status InflateTo(ByteSpan in, uint64_t declared, const ZipArchive::Sink& sink) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return absl::InternalError("inflateInit2 failed");
  absl::Cleanup end = [&zs] { inflateEnd(&zs); };
  // One spare byte tells "inflates to more than declared" apart from "exactly declared".
  std::vector<uint8_t> piece(std::min<uint64_t>(declared + 1, kPieceSize));
  uint64_t in_done = 0, out_done = 0;
  int rc = Z_OK;
  // zlib counts input in 32-bit units: feed it in slices.
  constexpr uint64_t kSlice = 1u << 30;
  while (true) {
    zs.next_in = const_cast<Bytef*>(in.data() + in_done);
    zs.avail_in = static_cast<uInt>(std::min(kSlice, in.size() - in_done));
    zs.next_out = piece.data();
    zs.avail_out = static_cast<uInt>(piece.size());
    const uInt in_before = zs.avail_in;
    rc = inflate(&zs, Z_NO_FLUSH);
    const uint64_t consumed = in_before - zs.avail_in;
    const uint64_t produced = piece.size() - zs.avail_out;
    in_done += consumed;
    out_done += produced;
    if (out_done > declared) break;
    if (produced > 0) {
      if (absl::Status s = sink(ByteSpan(piece.data(), produced)); !s.ok()) return s;
    }
    if (rc != Z_OK || (consumed == 0 && produced == 0)) break;
  }
  if (rc != Z_STREAM_END || out_done != declared) {
    return absl::DataLossError("wrong inflated size");
  }
  return absl::OkStatus();
}

// Applies the zip64 extra field (id 1) to the fields that were saturated at 0xffffffff.
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

// Reads `entry`'s local header: its name must be the directory's (a different local name is
// how zip-confusion attacks hide files) and its data must lie inside the file. Sets
// data_offset; returns where the data ends.
absl::StatusOr<uint64_t> ReadLocalHeader(ByteSpan data, ZipEntry& entry) {
  const auto header = SubSpan(data, entry.local_header_offset, kLocalHeaderSize);
  if (!header || *LoadLE<uint32_t>(*header, 0) != kLocalHeader) {
    return Malformed(absl::StrCat("bad local header for ", entry.name));
  }
  const uint16_t name_size = *LoadLE<uint16_t>(*header, 26);
  const uint16_t extra_size = *LoadLE<uint16_t>(*header, 28);
  const auto local_name = SubSpan(data, entry.local_header_offset + kLocalHeaderSize, name_size);
  if (!local_name || AsChars(*local_name) != entry.name) {
    return Malformed(
        absl::StrCat("local header name of ", entry.name, " differs from the central directory"));
  }
  entry.data_offset = entry.local_header_offset + kLocalHeaderSize + name_size + extra_size;
  if (!SubSpan(data, entry.data_offset, entry.compressed_size)) {
    return Malformed(absl::StrCat("data of ", entry.name, " runs past the end"));
  }
  return entry.data_offset + entry.compressed_size;
}

// Each member's local header and data, [local_header_offset, `ends`[i]), must overlap no
// other member's and end before the central directory at `directory`. Overlapping members
// are David Fifield's "better zip bomb": thousands of entries sharing one deflate stream,
// each inflating it again (unzip 6.0 and Python's zipfile refuse them too).
absl::Status CheckLayout(const std::vector<ZipEntry>& entries, const std::vector<uint64_t>& ends,
                         uint64_t directory) {
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return entries[a].local_header_offset < entries[b].local_header_offset;
  });
  auto range = [&](size_t i) {
    return absl::StrCat("bytes ", entries[i].local_header_offset, "-", ends[i]);
  };
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    if (k + 1 < order.size() && ends[i] > entries[order[k + 1]].local_header_offset) {
      const size_t next = order[k + 1];
      return Malformed(absl::StrCat(
          "member \"", entries[next].name, "\" (", range(next), ") overlaps member \"",
          entries[i].name, "\" (", range(i),
          "): overlapping members make a zip bomb, one stream inflated once per member. Fix: "
          "rebuild the archive with a standard zip tool"));
    }
    if (ends[i] > directory) {
      return Malformed(absl::StrCat("member \"", entries[i].name, "\" (", range(i),
                                    ") runs into the central directory at byte ", directory));
    }
  }
  return absl::OkStatus();
}

// The members' declared sizes against `limits`, before anything is inflated.
absl::Status CheckInflatedTotal(const std::vector<ZipEntry>& entries, uint64_t archive_size,
                                const ZipLimits& limits) {
  uint64_t total = 0;
  for (const ZipEntry& e : entries) {
    constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
    total = e.uncompressed_size > kMax - total ? kMax : total + e.uncompressed_size;
  }
  if (total > limits.max_total_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the members declare ", total, " bytes uncompressed, over the limit of ",
                     limits.max_total_bytes, " per archive; nothing was inflated"));
  }
  if (limits.max_ratio > 0 && total > limits.ratio_floor_bytes &&
      total / limits.max_ratio > archive_size) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the members declare ", total, " bytes uncompressed from an archive of ",
                     archive_size, " bytes, over ", limits.max_ratio,
                     ":1 (real wheels inflate about 2-5:1); nothing was "
                     "inflated"));
  }
  return absl::OkStatus();
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

absl::StatusOr<ZipArchive> ZipArchive::Open(ByteSpan data, const ZipLimits& limits) {
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
  std::vector<uint64_t> ends;  // where each member's data ends
  ends.reserve(count);
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
    auto data_end = ReadLocalHeader(data, entry);
    if (!data_end.ok()) return data_end.status();
    ends.push_back(*data_end);
    archive.entries_.push_back(std::move(entry));
    at += kCentralHeaderSize + name_size + extra_size + comment_size;
  }
  if (absl::Status s = CheckLayout(archive.entries_, ends, cd_offset); !s.ok()) return s;
  if (absl::Status s = CheckInflatedTotal(archive.entries_, data.size(), limits); !s.ok()) {
    return s;
  }
  return archive;
}

const ZipEntry* ZipArchive::Find(const std::string& name) const {
  for (const ZipEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

ByteSpan ZipArchive::RawBytes(const ZipEntry& entry) const {
  return data_.subspan(entry.data_offset, entry.compressed_size);
}

absl::Status ZipArchive::CheckReadable(const ZipEntry& entry) const {
  if (entry.IsEncrypted()) {
    return absl::UnimplementedError(absl::StrCat(entry.name, " is encrypted"));
  }
  if (entry.method == 0) {
    if (entry.compressed_size != entry.uncompressed_size) {
      return Malformed(absl::StrCat("stored member ", entry.name, " has two different sizes"));
    }
    return absl::OkStatus();
  }
  if (entry.method != 8) {
    return absl::UnimplementedError(absl::StrCat(entry.name, " uses compression method ",
                                                 entry.method, " (only stored and deflate)"));
  }
  // Deflate cannot expand more than 1032:1 (RFC 1951's longest match per 2-bit code), so a
  // larger declared size is a lie made to provoke a huge allocation.
  if (entry.uncompressed_size > entry.compressed_size * kMaxDeflateRatio + kDeflateSlack) {
    return Malformed(absl::StrCat(entry.name, " declares ", entry.uncompressed_size, " bytes from ",
                                  entry.compressed_size,
                                  " compressed; deflate cannot expand that much"));
  }
  return absl::OkStatus();
}

absl::Status ZipArchive::ReadTo(const ZipEntry& entry, const Sink& sink) const {
  if (absl::Status s = CheckReadable(entry); !s.ok()) return s;
  const ByteSpan stored = RawBytes(entry);
  uLong crc = crc32_z(0L, Z_NULL, 0);
  absl::Status sink_status;
  auto checked = [&](ByteSpan piece) {
    crc = crc32_z(crc, piece.data(), piece.size());
    sink_status = sink(piece);
    return sink_status;
  };
  if (entry.method == 0) {
    for (uint64_t at = 0; at < stored.size(); at += kPieceSize) {
      const ByteSpan piece = stored.subspan(at, std::min(kPieceSize, stored.size() - at));
      if (absl::Status s = checked(piece); !s.ok()) return s;
    }
  } else if (absl::Status s = InflateTo(stored, entry.uncompressed_size, checked); !s.ok()) {
    if (!sink_status.ok()) return sink_status;
    return Malformed(absl::StrCat(entry.name, " does not inflate to its declared ",
                                  entry.uncompressed_size, " bytes"));
  }
  if (crc != entry.crc32) return Malformed(absl::StrCat(entry.name, " fails its CRC-32 check"));
  return absl::OkStatus();
}

absl::StatusOr<ZipMemberData> ZipArchive::Read(const ZipEntry& entry, uint64_t max_size) const {
  if (entry.uncompressed_size > max_size) {
    return absl::ResourceExhaustedError(absl::StrCat(entry.name, " is ", entry.uncompressed_size,
                                                     " bytes uncompressed, over the limit of ",
                                                     max_size));
  }
  if (entry.method == 0) {
    // A view into the archive: check it without copying it.
    if (absl::Status s = ReadTo(entry, [](ByteSpan) { return absl::OkStatus(); }); !s.ok()) {
      return s;
    }
    return ZipMemberData(RawBytes(entry));
  }
  // Grown with what actually comes out, so a member lying about its size costs what it
  // really inflates to, never what it declares.
  std::vector<uint8_t> out;
  absl::Status s = ReadTo(entry, [&](ByteSpan piece) {
    if (out.size() + piece.size() > out.capacity()) {
      out.reserve(
          std::min<uint64_t>(entry.uncompressed_size,
                             std::max<uint64_t>(2 * out.capacity(), out.size() + piece.size())));
    }
    out.insert(out.end(), piece.begin(), piece.end());
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return ZipMemberData(std::move(out));
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
