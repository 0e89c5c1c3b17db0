// The coordinator's data directory: state/ (RocksDB), token, later cas/.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace farm::coordinator {

// Creates `dir` if needed and proves it is a writable directory. Errors name the path,
// the reason and the fix.
absl::Status PrepareDataDir(const std::string& dir);

// Where the RocksDB state lives inside a data dir.
std::string StateDir(const std::string& data_dir);

}  // namespace farm::coordinator
