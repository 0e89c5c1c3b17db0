// Reading a whole file into memory.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace farm {

// The bytes of `path`. NOT_FOUND naming the path when it cannot be opened, DATA_LOSS when
// reading fails part way.
absl::StatusOr<std::string> ReadFileContents(const std::string& path);

}  // namespace farm
