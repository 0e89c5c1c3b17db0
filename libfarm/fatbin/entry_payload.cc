#include "libfarm/fatbin/entry_payload.h"

#include <lz4.h>
#include <zstd.h>

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace farm {

absl::StatusOr<std::vector<uint8_t>> DecompressEntryPayload(const FatbinEntry& entry,
                                                            uint64_t max_size) {
  if (entry.compression == PayloadCompression::kNone) {
    return std::vector<uint8_t>(entry.payload.begin(), entry.payload.end());
  }
  const std::string arch = entry.ArchName();
  if (entry.uncompressed_size > max_size) {
    return absl::ResourceExhaustedError(
        absl::StrCat(arch, " entry claims ", entry.uncompressed_size,
                     " uncompressed bytes, over the limit of ", max_size));
  }
  std::vector<uint8_t> out(entry.uncompressed_size);
  if (entry.compression == PayloadCompression::kZstd) {
    const size_t got =
        ZSTD_decompress(out.data(), out.size(), entry.payload.data(), entry.payload.size());
    if (ZSTD_isError(got)) {
      return absl::InvalidArgumentError(
          absl::StrCat(arch, " entry: zstd payload does not decompress: ", ZSTD_getErrorName(got)));
    }
    if (got != out.size()) {
      return absl::InvalidArgumentError(absl::StrCat(arch, " entry: zstd payload gave ", got,
                                                     " bytes, header says ", out.size()));
    }
    return out;
  }
  // LZ4 cannot expand more than 255:1, so a larger claim is a lie made to provoke a huge
  // allocation; refuse it before allocating.
  if (entry.uncompressed_size > entry.payload.size() * 255 + 16) {
    return absl::InvalidArgumentError(absl::StrCat(arch, " entry claims ", entry.uncompressed_size,
                                                   " bytes from ", entry.payload.size(),
                                                   " LZ4 bytes; LZ4 cannot expand that much"));
  }
  constexpr uint64_t kIntMax = std::numeric_limits<int>::max();
  if (entry.payload.size() > kIntMax || out.size() > kIntMax) {
    return absl::ResourceExhaustedError(absl::StrCat(arch, " entry: LZ4 payload over 2 GiB"));
  }
  const int got = LZ4_decompress_safe(
      reinterpret_cast<const char*>(entry.payload.data()), reinterpret_cast<char*>(out.data()),
      static_cast<int>(entry.payload.size()), static_cast<int>(out.size()));
  if (got < 0 || static_cast<uint64_t>(got) != out.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(arch, " entry: LZ4 payload does not decompress to ", out.size(), " bytes"));
  }
  return out;
}

}  // namespace farm
