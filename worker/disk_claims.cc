#include "worker/disk_claims.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "libfarm/units/byte_size.h"

namespace farm::worker {

DiskClaims::DiskClaims(std::string path, uint64_t reserve_bytes, FreeBytesFn free_bytes)
    : path_(std::move(path)), reserve_bytes_(reserve_bytes), free_bytes_(std::move(free_bytes)) {}

DiskClaims::Claim& DiskClaims::Claim::operator=(Claim&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = other.owner_;
    bytes_ = other.bytes_;
    other.owner_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

void DiskClaims::Claim::Release() {
  if (owner_ == nullptr) return;
  absl::MutexLock lock(&owner_->mu_);
  owner_->claimed_ -= bytes_;
  owner_ = nullptr;
}

absl::StatusOr<DiskClaims::Claim> DiskClaims::Take(uint64_t bytes) {
  // Read before the lock: statvfs can be slow on a busy disk, and a claim made meanwhile is
  // still subtracted below.
  absl::StatusOr<uint64_t> free = free_bytes_(path_);
  if (!free.ok()) return free.status();
  absl::MutexLock lock(&mu_);
  const uint64_t held = claimed_;
  const uint64_t available = *free > held ? *free - held : 0;
  if (bytes > available || available - bytes < reserve_bytes_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "this worker cannot lay out an action of ", FormatByteSize(bytes), ": its disk has ",
        FormatByteSize(*free), " free, ", FormatByteSize(held),
        " of it claimed by the actions running here, and keeps ", FormatByteSize(reserve_bytes_),
        " free for its cache and other actions (farm-worker --disk-reserve). Fix: another "
        "worker takes it; free space under --work-dir"));
  }
  claimed_ += bytes;
  return Claim(this, bytes);
}

int64_t DiskClaims::HeadroomBytes() {
  absl::StatusOr<uint64_t> free = free_bytes_(path_);
  if (!free.ok()) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(*free) - static_cast<int64_t>(reserve_bytes_);
}

uint64_t DiskClaims::claimed_bytes() {
  absl::MutexLock lock(&mu_);
  return claimed_;
}

}  // namespace farm::worker
