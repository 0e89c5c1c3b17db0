#include "libfarm/file_tree/footprint.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "libfarm/units/byte_size.h"

namespace farm {
namespace {

// Sizes are the client's word (up to 2^63 each): the sum saturates rather than wrap to small.
uint64_t AddSaturating(uint64_t a, int64_t b) {
  if (b <= 0) return a;
  const uint64_t add = static_cast<uint64_t>(b);
  return a > UINT64_MAX - add ? UINT64_MAX : a + add;
}

}  // namespace

Footprint FootprintOf(const farm::v1::FileTree& tree) {
  Footprint f;
  f.entries = tree.files_size();
  for (const farm::v1::InputFile& entry : tree.files()) {
    f.bytes = AddSaturating(f.bytes, entry.digest().size_bytes());
  }
  return f;
}

Footprint FootprintOf(const farm::v1::Action& action) {
  Footprint f;
  f.entries = action.inputs_size();
  for (const farm::v1::InputFile& in : action.inputs()) {
    f.bytes = AddSaturating(f.bytes, in.digest().size_bytes());
  }
  return f;
}

Footprint operator+(Footprint a, const Footprint& b) {
  a.entries += b.entries;
  a.bytes = b.bytes > UINT64_MAX - a.bytes ? UINT64_MAX : a.bytes + b.bytes;
  return a;
}

absl::Status CheckFootprint(absl::string_view what, const Footprint& footprint, uint64_t max_bytes,
                            absl::string_view setting) {
  if (footprint.bytes <= max_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(what, " hold ", FormatByteSize(footprint.bytes), " in ", footprint.entries,
                   " entries, counting each file at every path it appears; the limit is ",
                   FormatByteSize(max_bytes), " (", setting,
                   "). Fix: send only the files the command reads, or raise the limit"));
}

}  // namespace farm
