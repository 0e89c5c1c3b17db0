// The plain bytes of a fat-binary entry (LZ4 block / zstd frame / stored).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/fatbin/fatbin_reader.h"

namespace farm {

// Decompresses `entry`'s payload; refuses results larger than `max_size` so a hostile header
// cannot make us allocate gigabytes. Uncompressed entries come back as a copy.
absl::StatusOr<std::vector<uint8_t>> DecompressEntryPayload(const FatbinEntry& entry,
                                                            uint64_t max_size);

}  // namespace farm
