// Reading a whole file into memory, and replacing one whole.
#pragma once

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace farm {

// The bytes of `path`. NOT_FOUND naming the path when it cannot be opened, DATA_LOSS when
// reading fails part way.
absl::StatusOr<std::string> ReadFileContents(const std::string& path);

// Writes `bytes` beside `path` (a temp name of this process), syncs it and renames it over
// `path`, so a reader sees the old file or the new one, never half of one. The file gets
// `mode` whatever the umask.
absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes,
                                 mode_t mode = 0644);

}  // namespace farm
