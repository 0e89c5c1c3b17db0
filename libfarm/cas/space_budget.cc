#include "libfarm/cas/space_budget.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "libfarm/units/byte_size.h"

namespace farm {

absl::Status SpaceBudget::Take(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  if (bytes > limit_ - std::min(used_, limit_)) {
    return absl::ResourceExhaustedError(
        absl::StrCat(what_, " is full (", FormatByteSize(used_), " of ", FormatByteSize(limit_),
                     " held by writes in flight); nothing was stored. Fix: ", fix_));
  }
  used_ += bytes;
  return absl::OkStatus();
}

void SpaceBudget::Give(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  used_ -= std::min(used_, bytes);
}

uint64_t SpaceBudget::in_use() {
  absl::MutexLock lock(&mu_);
  return used_;
}

}  // namespace farm
