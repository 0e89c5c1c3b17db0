// The scheduler's view of the coordinator's CAS.
#pragma once

#include "coordinator/cas/blob_store.h"
#include "coordinator/scheduler/blob_index.h"

namespace farm::coordinator {

class BlobStoreIndex final : public BlobIndex {
 public:
  explicit BlobStoreIndex(BlobStore* store) : store_(store) {}
  bool Contains(const farm::v1::Digest& digest) override { return store_->Contains(digest); }
  absl::StatusOr<std::string> Read(const farm::v1::Digest& digest, int64_t max_bytes) override;
  void Pin(const std::string& owner, const std::vector<farm::v1::Digest>& digests) override {
    store_->Pin(owner, digests);
  }
  void Unpin(const std::string& owner) override { store_->Unpin(owner); }

 private:
  BlobStore* store_;
};

}  // namespace farm::coordinator
