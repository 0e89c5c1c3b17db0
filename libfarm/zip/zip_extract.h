// Unpacking one folder of a zip archive (a wheel) onto disk, for archives from the network:
// every name, type and size is checked before anything is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace farm {

struct ZipExtractLimits {
  uint64_t max_member_bytes = 1ULL << 30;  // nvcc's largest member (cicc) is ~80 MiB
  uint64_t max_total_bytes = 8ULL << 30;
  uint64_t max_members = 100000;
};

// Writes each member of the zip at `zip_path` whose name starts with `prefix` ("nvidia/cu13/",
// or "" for all) to `dest`/<name without prefix>, creating directories as needed. Files get
// mode 0644 whatever the archive says: the caller decides what is executable. Refused, before
// anything is written: unsafe names (CheckMemberPath), symlinks, encrypted members, sizes
// beyond `limits`; while writing: a file that already exists under `dest` (two archives
// unpacked into one tree must not overwrite each other's files). Returns the relative paths
// of the files written, in archive order.
absl::StatusOr<std::vector<std::string>> ExtractZipFolder(const std::string& zip_path,
                                                          const std::string& prefix,
                                                          const std::string& dest,
                                                          const ZipExtractLimits& limits = {});

}  // namespace farm
