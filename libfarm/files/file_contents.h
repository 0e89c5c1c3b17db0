// Reading a whole file into memory, and replacing one whole.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

// The bytes of `path`. NOT_FOUND naming the path when it cannot be opened, DATA_LOSS when
// reading fails part way.
absl::StatusOr<std::string> ReadFileContents(const std::string& path);

// The same, read into `buffer`, whose size only ever grows: the bytes are the view's, valid
// until the next read into it. For a caller that reads many files (hundreds of headers per
// compile), so each read neither zero-fills fresh memory nor faults its pages in again.
// `info`, when given, gets the open file's fstat() from before it was read.
absl::StatusOr<absl::string_view> ReadFileContentsInto(const std::string& path, std::string& buffer,
                                                       struct stat* info = nullptr);

// Writes `bytes` beside `path` (a temp name of this process), syncs it and renames it over
// `path`, so a reader sees the old file or the new one, never half of one. The file gets
// `mode` whatever the umask.
absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes,
                                 mode_t mode = 0644);

// Appends `bytes` to `path` (created 0644 if absent) by one O_APPEND write(), which the kernel
// does not interleave with another process's append to the same local file.
absl::Status AppendToFile(const std::string& path, absl::string_view bytes);

}  // namespace farm
