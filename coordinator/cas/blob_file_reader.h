// Reads a stored blob's file in ranges for the services that stream blobs out (the farm's
// CasService.Download, REAPI's ByteStream.Read): opened once, so an eviction after the open
// cannot cut a stream short, and read whole ranges or not at all.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/cas/blob_store.h"
#include "farm/v1/cas.pb.h"

namespace farm::coordinator {

class BlobFileReader {
 public:
  // NOT_FOUND when the blob is not stored, or was evicted between the lookup and the open.
  static absl::StatusOr<BlobFileReader> Open(BlobStore* store, const farm::v1::Digest& digest);

  BlobFileReader(BlobFileReader&& other) noexcept;
  BlobFileReader& operator=(BlobFileReader&&) = delete;
  BlobFileReader(const BlobFileReader&) = delete;
  ~BlobFileReader();

  // Replaces `out` with the `size` bytes at `offset`; DATA_LOSS when the file is shorter
  // than its digest says.
  absl::Status ReadAt(int64_t offset, size_t size, std::string* out) const;

 private:
  BlobFileReader(int fd, farm::v1::Digest digest) : fd_(fd), digest_(std::move(digest)) {}

  int fd_;
  farm::v1::Digest digest_;
};

}  // namespace farm::coordinator
