// Byte sizes as operators write them in flags: "20GiB", "512MiB", "1.5G", "4096".
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace farm {

// Binary units (KiB, MiB, GiB, TiB; K/M/G/T and KB/MB/GB/TB are read as the same powers of
// 1024, since disk quotas are meant in those), optional fraction, optional 'B'.
absl::StatusOr<uint64_t> ParseByteSize(const std::string& text);

// "1.5 GiB", "512 MiB", "17 B".
std::string FormatByteSize(uint64_t bytes);

}  // namespace farm
