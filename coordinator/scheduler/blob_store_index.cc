#include "coordinator/scheduler/blob_store_index.h"

namespace farm::coordinator {

absl::StatusOr<std::string> BlobStoreIndex::Read(const farm::v1::Digest& digest,
                                                 int64_t max_bytes) {
  return store_->Read(digest, max_bytes);
}

}  // namespace farm::coordinator
