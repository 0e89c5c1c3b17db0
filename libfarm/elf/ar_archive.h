// Members of a static library ("!<arch>" format, GNU and BSD long names).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/elf/byte_span.h"

namespace farm {

struct ArMember {
  std::string name;
  ByteSpan data;  // points into the archive's bytes
};

bool HasArMagic(ByteSpan data);

// The archive's file members in order; the symbol index and long-name table are skipped.
absl::StatusOr<std::vector<ArMember>> ReadArArchive(ByteSpan data);

}  // namespace farm
