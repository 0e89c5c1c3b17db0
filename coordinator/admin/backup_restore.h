// farm-coordinator --restore-from: puts a backup that `farmctl admin backup` wrote into a
// data dir that holds no farm state yet, after checking it is complete and intact.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libfarm/backup/backup_layout.h"

namespace farm::coordinator {

// Refuses (changing nothing) a backup without its manifest, with files it does not name or
// counts it does not match, with a blob whose bytes are not its digest, and a data dir that
// already has state or blobs. The token file is not part of a backup: keep it, or a new one
// is made at the next start.
absl::StatusOr<BackupManifest> RestoreBackup(const std::string& backup_dir,
                                             const std::string& data_dir);

}  // namespace farm::coordinator
