#include "libfarm/disk/disk_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace farm {

absl::StatusOr<uint64_t> FreeBytes(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot read the free space of ", path, ": ", std::strerror(errno)));
  }
  return static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
}

bool IsDiskFull(const absl::Status& status) {
  if (status.ok()) return false;
  return absl::StrContains(status.message(), std::strerror(ENOSPC)) ||
         absl::StrContains(status.message(), std::strerror(EDQUOT));
}

DiskFullReporter::DiskFullReporter(std::shared_ptr<spdlog::logger> logger, absl::Duration period)
    : logger_(std::move(logger)), period_(period) {}

bool DiskFullReporter::Report(const absl::Status& status, absl::Time now) {
  if (!IsDiskFull(status)) return false;
  uint64_t suppressed = 0;
  {
    absl::MutexLock lock(&mu_);
    if (now - last_logged_ < period_) {
      ++suppressed_;
      return true;
    }
    last_logged_ = now;
    suppressed = suppressed_;
    suppressed_ = 0;
  }
  logger_->error("disk full: {}{}. Fix: free space on that filesystem",
                 std::string(status.message()),
                 suppressed > 0 ? absl::StrCat(" (and ", suppressed, " more since the last report)")
                                : std::string());
  return true;
}

}  // namespace farm
