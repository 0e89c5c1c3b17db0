// The worker's disk as actions share it: before an action's inputs are laid out, the bytes
// they will write are claimed against the filesystem's free space, less what actions being
// laid out or run have claimed and less a reserve kept for the blob cache and other tenants.
// Two actions at once never both count on the same free space; a claim lasts until the action
// is done. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace farm::worker {

class DiskClaims {
 public:
  using FreeBytesFn = std::function<absl::StatusOr<uint64_t>(const std::string&)>;

  // `path`: a directory on the filesystem actions write (the scratch root). `free_bytes`:
  // libfarm/disk's FreeBytes; tests pass their own.
  DiskClaims(std::string path, uint64_t reserve_bytes, FreeBytesFn free_bytes);

  // Releases its bytes when it goes.
  class Claim {
   public:
    Claim() = default;
    Claim(DiskClaims* owner, uint64_t bytes) : owner_(owner), bytes_(bytes) {}
    Claim(Claim&& other) noexcept { *this = std::move(other); }
    Claim& operator=(Claim&& other) noexcept;
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    ~Claim() { Release(); }

   private:
    void Release();
    DiskClaims* owner_ = nullptr;
    uint64_t bytes_ = 0;
  };

  // RESOURCE_EXHAUSTED, naming the free space, what others hold, the reserve and its setting,
  // when taking `bytes` would leave less than the reserve.
  absl::StatusOr<Claim> Take(uint64_t bytes);

  // Free space now, less the reserve: below zero means the reserve is being eaten.
  int64_t HeadroomBytes();

  uint64_t claimed_bytes();
  uint64_t reserve_bytes() const { return reserve_bytes_; }

 private:
  const std::string path_;
  const uint64_t reserve_bytes_;
  const FreeBytesFn free_bytes_;
  absl::Mutex mu_;
  uint64_t claimed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace farm::worker
