#include "libfarm/files/file_contents.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"

namespace farm {

absl::StatusOr<std::string> ReadFileContents(const std::string& path) {
  std::string bytes;
  absl::StatusOr<absl::string_view> read = ReadFileContentsInto(path, bytes);
  if (!read.ok()) return read.status();
  bytes.resize(read->size());
  return bytes;
}

absl::StatusOr<absl::string_view> ReadFileContentsInto(const std::string& path, std::string& buffer,
                                                       struct stat* info) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  absl::Cleanup close_fd = [fd] { ::close(fd); };
  // One read of the size fstat gives (and one more to see the end), not a stream's copies:
  // a build host reads hundreds of headers per compile.
  struct stat opened {};
  const bool known = ::fstat(fd, &opened) == 0;
  if (info != nullptr) *info = opened;  // zeroed where fstat failed
  const size_t expected = known && opened.st_size > 0 ? static_cast<size_t>(opened.st_size) : 0;
  if (buffer.size() < expected + 1) buffer.resize(expected + 1);
  size_t got = 0;
  while (true) {
    if (got == buffer.size()) buffer.resize(buffer.size() * 2);  // grew, or a pipe
    const ssize_t n = ::read(fd, buffer.data() + got, buffer.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::DataLossError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return absl::string_view(buffer.data(), got);
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes, mode_t mode) {
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create ", tmp, ": ", std::strerror(errno)));
  }
  const bool ok = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) &&
                  ::fchmod(fd, mode) == 0 && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::Status AppendToFile(const std::string& path, absl::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open ", path, " to append: ", std::strerror(errno)));
  }
  const ssize_t written = ::write(fd, bytes.data(), bytes.size());
  const int err = errno;
  ::close(fd);
  if (written != static_cast<ssize_t>(bytes.size())) {
    return absl::InternalError(absl::StrCat("cannot append to ", path, ": ",
                                            written < 0 ? std::strerror(err) : "a short write"));
  }
  return absl::OkStatus();
}

}  // namespace farm
