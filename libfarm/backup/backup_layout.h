// What a farm backup holds (farmctl admin backup, farm-coordinator --restore-from): the
// coordinator's data dir layout, "state/<RocksDB checkpoint files>" and
// "cas/blobs/<2 hex>/<sha256>", plus backup.json, written last, which makes it complete.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

inline constexpr char kBackupManifest[] = "backup.json";
inline constexpr int kBackupFormat = 1;

// OK for "state/000012.sst", "cas/blobs/ab/ab12…" (a sha256) and the manifest; anything
// else (other directories, "..", absolute paths, a blob not under its own prefix) is
// INVALID_ARGUMENT naming the path: a backup names files, nothing more.
absl::Status ValidateBackupPath(absl::string_view path);

// Where the blob with `hash` goes in a backup: "cas/blobs/<first 2 hex>/<hash>", the data
// dir's own layout, so a restore moves cas/blobs into place as it is.
std::string BackupBlobPath(absl::string_view hash);

// backup.json: what the backup holds, checked by the writer and by restore.
struct BackupManifest {
  int format = kBackupFormat;
  std::string version;     // the coordinator's
  std::string created_at;  // RFC 3339
  uint64_t files = 0;      // besides the manifest
  uint64_t bytes = 0;
  uint64_t blobs = 0;
};
std::string BackupManifestToJson(const BackupManifest& manifest);
absl::StatusOr<BackupManifest> ParseBackupManifest(absl::string_view json);

}  // namespace farm
