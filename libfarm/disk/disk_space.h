// Free space on a filesystem, and disk-full failures told apart from other write errors, so a
// full disk is reported with its path and a fix instead of crashing or failing silently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace spdlog {
class logger;
}

namespace farm {

// Bytes an unprivileged process may still write on the filesystem holding `path`.
absl::StatusOr<uint64_t> FreeBytes(const std::string& path);

// True if `status` is a write that failed for want of space (ENOSPC, EDQUOT), as
// VerifiedFileWriter and RocksDB report them.
bool IsDiskFull(const absl::Status& status);

// Logs disk-full failures on `logger` at most once per `period` (with how many were not
// logged since), so a full disk is in the log without flooding it.
class DiskFullReporter {
 public:
  DiskFullReporter(std::shared_ptr<spdlog::logger> logger, absl::Duration period);

  // Logs `status` if it is a disk-full failure and the period has passed; returns whether it
  // was one.
  bool Report(const absl::Status& status, absl::Time now = absl::Now());

 private:
  const std::shared_ptr<spdlog::logger> logger_;
  const absl::Duration period_;
  absl::Mutex mu_;
  absl::Time last_logged_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  uint64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace farm
