#include "coordinator/cas/blob_file_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {

absl::StatusOr<BlobFileReader> BlobFileReader::Open(BlobStore* store,
                                                    const farm::v1::Digest& digest) {
  FARM_ASSIGN_OR_RETURN(const std::string path, store->PathOf(digest));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    // Evicted between the lookup and here.
    return absl::NotFoundError(absl::StrCat("blob ", DigestToString(digest), " is not in the CAS"));
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return BlobFileReader(fd, digest);
}

BlobFileReader::BlobFileReader(BlobFileReader&& other) noexcept
    : fd_(other.fd_), digest_(std::move(other.digest_)) {
  other.fd_ = -1;
}

BlobFileReader::~BlobFileReader() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status BlobFileReader::ReadAt(int64_t offset, size_t size, std::string* out) const {
  out->resize(size);
  size_t got = 0;
  while (got < size) {
    const ssize_t n =
        ::pread(fd_, out->data() + got, size - got, offset + static_cast<int64_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::DataLossError(absl::StrCat(
          "blob ", DigestToString(digest_),
          " is shorter on disk than recorded: ", n < 0 ? std::strerror(errno) : "end of file"));
    }
    got += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace farm::coordinator
