// An exclusive (or shared) flock(2) on a file, held until the FileLock is destroyed (or the process
// ends: the kernel releases it, so a crash never leaves a stale lock behind).
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace farm {

class FileLock {
 public:
  // Waits for the lock; `waiting` (if set) runs once when another holder makes it wait.
  static absl::StatusOr<FileLock> Acquire(const std::string& path,
                                          const std::function<void()>& waiting);
  // UNAVAILABLE at once if another process holds it.
  static absl::StatusOr<FileLock> TryAcquire(const std::string& path);
  // A shared lock, beside other shared holders; waits while an exclusive one is held.
  static absl::StatusOr<FileLock> AcquireShared(const std::string& path);

  // Keeps the lock held by the program this process execs next (and by what that starts),
  // until the last of them ends: clears close-on-exec on its descriptor.
  absl::Status KeepAcrossExec();

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace farm
