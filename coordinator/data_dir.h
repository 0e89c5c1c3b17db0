// The coordinator's data directory: state/ (RocksDB), token, later cas/.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace farm::coordinator {

// Creates `dir` if needed and proves it is a writable directory. Errors name the path,
// the reason and the fix.
absl::Status PrepareDataDir(const std::string& dir);

}  // namespace farm::coordinator
