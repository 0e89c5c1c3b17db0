#include "coordinator/scheduler/blob_store_index.h"

#include "absl/strings/str_cat.h"
#include "libfarm/files/file_contents.h"

namespace farm::coordinator {

absl::StatusOr<std::string> BlobStoreIndex::Read(const farm::v1::Digest& digest,
                                                 int64_t max_bytes) {
  if (digest.size_bytes() > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("blob ", digest.hash(), " holds ",
                                                     digest.size_bytes(), " bytes; the limit is ",
                                                     max_bytes));
  }
  absl::StatusOr<std::string> path = store_->PathOf(digest);
  if (!path.ok()) return path.status();
  // Evicted between the two calls: read as not stored.
  absl::StatusOr<std::string> bytes = ReadFileContents(*path);
  if (!bytes.ok()) return absl::NotFoundError(bytes.status().message());
  return bytes;
}

}  // namespace farm::coordinator
