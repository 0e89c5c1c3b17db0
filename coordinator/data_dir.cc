#include "coordinator/data_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace farm::coordinator {

absl::Status PrepareDataDir(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string fix = "Fix: pass --data-dir with a directory this user can write";
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("data dir ", dir, " exists and is not a directory. ", fix));
  }
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create data dir ", dir, ": ", ec.message(), ". ", fix));
  }
  // access(W_OK) is not enough (read-only mounts, ACLs): prove it by creating a file.
  const std::string probe = (fs::path(dir) / ".write-probe").string();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("data dir ", dir, " is not writable: ", std::strerror(errno), ". ", fix));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return absl::OkStatus();
}

std::string StateDir(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "state").string();
}

}  // namespace farm::coordinator
