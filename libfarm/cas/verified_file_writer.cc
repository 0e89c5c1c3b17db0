#include "libfarm/cas/verified_file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"

namespace farm {
namespace {

// Writeback granularity: big enough that the syscalls cost nothing per byte, small enough
// that little is left for the final fsync (and, dropping behind, that the cached tail is small).
constexpr int64_t kWindowBytes = 8 << 20;

absl::Status ErrnoError(const std::string& what, int err) {
  const std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  if (err == ENOSPC || err == EDQUOT) return absl::ResourceExhaustedError(msg);
  if (err == EACCES || err == EPERM || err == EROFS) return absl::PermissionDeniedError(msg);
  if (err == ENOENT) return absl::NotFoundError(msg);
  return absl::InternalError(msg);
}

}  // namespace

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(absl::StrCat("cannot open directory ", dir), errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoError(absl::StrCat("cannot sync directory ", dir), err);
  return absl::OkStatus();
}

absl::StatusOr<VerifiedFileWriter> VerifiedFileWriter::Create(const std::string& temp_dir,
                                                              int mode) {
  std::string path = (std::filesystem::path(temp_dir) / ".farm-blob-XXXXXX").string();
  const int fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) return ErrnoError(absl::StrCat("cannot create a temp file in ", temp_dir), errno);
  return VerifiedFileWriter(fd, std::move(path), mode);
}

VerifiedFileWriter::VerifiedFileWriter(int fd, std::string temp_path, int mode)
    : fd_(fd), temp_path_(std::move(temp_path)), mode_(mode) {}

VerifiedFileWriter::VerifiedFileWriter(VerifiedFileWriter&& other) noexcept
    : fd_(other.fd_),
      temp_path_(std::move(other.temp_path_)),
      mode_(other.mode_),
      bytes_(other.bytes_),
      writeback_from_(other.writeback_from_),
      dropped_to_(other.dropped_to_),
      stream_behind_(other.stream_behind_),
      drop_behind_(other.drop_behind_),
      sha_(std::move(other.sha_)),
      finished_(other.finished_),
      moved_(other.moved_),
      budget_(std::move(other.budget_)) {
  other.fd_ = -1;
  other.moved_ = true;
}

VerifiedFileWriter::~VerifiedFileWriter() { Discard(); }

void VerifiedFileWriter::Discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!moved_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
  moved_ = true;
  ReturnBudget();
}

void VerifiedFileWriter::ReturnBudget() {
  if (budget_ != nullptr) budget_->Give(static_cast<uint64_t>(bytes_));
  budget_.reset();
}

absl::Status VerifiedFileWriter::Append(absl::string_view data) {
  if (finished_ || fd_ < 0) return absl::FailedPreconditionError("append after finish");
  if (budget_ != nullptr) {
    if (absl::Status s = budget_->Take(data.size()); !s.ok()) return s;
  }
  sha_.Update(data);
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      if (budget_ != nullptr) budget_->Give(data.size());  // bytes_ never counted them
      return ErrnoError(absl::StrCat("cannot write ", temp_path_), err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  bytes_ += static_cast<int64_t>(data.size());
  return StreamBehind();
}

absl::Status VerifiedFileWriter::StreamBehind() {
  if (!stream_behind_ || bytes_ - writeback_from_ < kWindowBytes) return absl::OkStatus();
  const auto sync = [&](int64_t from, int64_t to, unsigned flags) -> absl::Status {
    if (::sync_file_range(fd_, from, to - from, flags) == 0) return absl::OkStatus();
    const int err = errno;
    if (err == EINVAL || err == ESPIPE || err == ENOSYS) {
      stream_behind_ = false;  // not supported here: Finish's fsync does it all
      return absl::OkStatus();
    }
    // A writeback error reported here is not reported again by the fsync in Finish.
    return ErrnoError(absl::StrCat("cannot write ", temp_path_), err);
  };
  if (absl::Status s = sync(writeback_from_, bytes_, SYNC_FILE_RANGE_WRITE); !s.ok()) return s;
  writeback_from_ = bytes_;
  const int64_t drop_to = bytes_ - 2 * kWindowBytes;
  if (!drop_behind_ || !stream_behind_ || drop_to <= dropped_to_) return absl::OkStatus();
  if (absl::Status s =
          sync(dropped_to_, drop_to,
               SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      !s.ok()) {
    return s;
  }
  // Advisory: pages still dirty or mapped are simply kept.
  ::posix_fadvise(fd_, dropped_to_, drop_to - dropped_to_, POSIX_FADV_DONTNEED);
  dropped_to_ = drop_to;
  return absl::OkStatus();
}

absl::StatusOr<farm::v1::Digest> VerifiedFileWriter::Finish() {
  if (finished_ || fd_ < 0) return absl::FailedPreconditionError("finish called twice");
  finished_ = true;
  if (::fchmod(fd_, static_cast<mode_t>(mode_)) != 0 || ::fsync(fd_) != 0) {
    return ErrnoError(absl::StrCat("cannot sync ", temp_path_), errno);
  }
  farm::v1::Digest d;
  d.set_hash(sha_.FinishHex());
  d.set_size_bytes(bytes_);
  return d;
}

absl::StatusOr<farm::v1::Digest> VerifiedFileWriter::FinishExpecting(
    const farm::v1::Digest& expected) {
  auto actual = Finish();
  if (!actual.ok()) return actual.status();
  const bool size_ok = expected.size_bytes() < 0 || expected.size_bytes() == actual->size_bytes();
  if (actual->hash() != expected.hash() || !size_ok) {
    return absl::InvalidArgumentError(absl::StrCat("the bytes do not match their digest: expected ",
                                                   DigestToString(expected), ", got ",
                                                   DigestToString(*actual)));
  }
  return actual;
}

absl::Status VerifiedFileWriter::MoveTo(const std::string& final_path) {
  if (!finished_ || moved_) return absl::FailedPreconditionError("move before finish");
  if (::rename(temp_path_.c_str(), final_path.c_str()) != 0) {
    return ErrnoError(absl::StrCat("cannot move ", temp_path_, " to ", final_path), errno);
  }
  moved_ = true;
  ::close(fd_);
  fd_ = -1;
  ReturnBudget();  // the bytes now count against the store they moved into
  const std::string dir = std::filesystem::path(final_path).parent_path().string();
  return SyncDirectory(dir.empty() ? "." : dir);
}

}  // namespace farm
