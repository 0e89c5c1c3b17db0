// The wheel's RECORD (CSV: path, hash, size) and the hashes it holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/elf/byte_span.h"

namespace farm {

struct RecordRow {
  std::string path;
  std::string hash;  // "sha256=<urlsafe base64, no padding>", empty for RECORD itself
  std::optional<uint64_t> size;
};

// Parses RECORD text (RFC 4180 quoting, as Python's csv module writes it).
absl::StatusOr<std::vector<RecordRow>> ParseRecord(absl::string_view text);

// "sha256=..." of `data`, in RECORD's encoding.
std::string RecordSha256(ByteSpan data);

// The same from a SHA-256 already computed, as hex (Sha256::FinishHex, for data hashed while
// it streams); "" when `sha256_hex` is not 64 hex digits.
std::string RecordSha256FromHex(absl::string_view sha256_hex);

}  // namespace farm
