// What the scheduler needs from the CAS: whether blobs exist, a small blob's bytes (an action's
// file trees, checked at submission), and pins that keep the inputs and outputs of live
// actions from being evicted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "farm/v1/cas.pb.h"

namespace farm::coordinator {

class BlobIndex {
 public:
  virtual ~BlobIndex() = default;
  virtual bool Contains(const farm::v1::Digest& digest) = 0;
  // The blob's bytes; NOT_FOUND when it is not stored, RESOURCE_EXHAUSTED when it is larger
  // than `max_bytes`.
  virtual absl::StatusOr<std::string> Read(const farm::v1::Digest& digest, int64_t max_bytes) = 0;
  virtual void Pin(const std::string& owner, const std::vector<farm::v1::Digest>& digests) = 0;
  virtual void Unpin(const std::string& owner) = 0;
};

}  // namespace farm::coordinator
