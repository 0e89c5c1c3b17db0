// What the scheduler needs from the CAS: whether blobs exist, and pins that keep the inputs
// and outputs of live actions from being evicted.
#pragma once

#include <string>
#include <vector>

#include "farm/v1/cas.pb.h"

namespace farm::coordinator {

class BlobIndex {
 public:
  virtual ~BlobIndex() = default;
  virtual bool Contains(const farm::v1::Digest& digest) = 0;
  virtual void Pin(const std::string& owner, const std::vector<farm::v1::Digest>& digests) = 0;
  virtual void Unpin(const std::string& owner) = 0;
};

}  // namespace farm::coordinator
