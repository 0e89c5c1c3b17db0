// A worker's hold on its work dir. The lock keeps a second farm-worker off it (starting, it
// would kill the first one's sandboxes and empty its scratch). The instance id kept there
// lets the coordinator tell this worker restarting (same id: it takes its name back at once)
// from another host started with the same --name (refused while this one is alive).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libfarm/files/file_lock.h"

namespace farm::worker {

struct WorkDirClaim {
  FileLock lock;
  std::string instance_id;  // 32 hex digits, made once per work dir
};

// FAILED_PRECONDITION naming the dir and the fix when another process holds it.
absl::StatusOr<WorkDirClaim> ClaimWorkDir(const std::string& work_dir);

}  // namespace farm::worker
