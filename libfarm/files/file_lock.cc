#include "libfarm/files/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace farm {
namespace {

absl::StatusOr<int> OpenLockFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open the lock file ", path, ": ", std::strerror(errno)));
  }
  return fd;
}

}  // namespace

absl::StatusOr<FileLock> FileLock::Acquire(const std::string& path,
                                           const std::function<void()>& waiting) {
  auto fd = OpenLockFile(path);
  if (!fd.ok()) return fd.status();
  if (::flock(*fd, LOCK_EX | LOCK_NB) != 0) {
    if (waiting) waiting();
    while (::flock(*fd, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  return FileLock(*fd);
}

absl::StatusOr<FileLock> FileLock::TryAcquire(const std::string& path) {
  auto fd = OpenLockFile(path);
  if (!fd.ok()) return fd.status();
  if (::flock(*fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(*fd);
    return absl::UnavailableError(
        absl::StrCat(path, " is locked by another process (", std::strerror(err), ")"));
  }
  return FileLock(*fd);
}

absl::StatusOr<FileLock> FileLock::AcquireShared(const std::string& path) {
  auto fd = OpenLockFile(path);
  if (!fd.ok()) return fd.status();
  while (::flock(*fd, LOCK_SH) != 0 && errno == EINTR) {
  }
  return FileLock(*fd);
}

absl::Status FileLock::KeepAcrossExec() {
  const int flags = ::fcntl(fd_, F_GETFD);
  if (flags < 0 || ::fcntl(fd_, F_SETFD, flags & ~FD_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot keep a file lock across exec: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace farm
