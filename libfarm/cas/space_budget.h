// A byte budget shared by concurrent writers: temp files of uploads in flight draw from it
// as they grow and give back when they end, so their total stays bounded.
#pragma once

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace farm {

class SpaceBudget {
 public:
  // `what` names the space in errors ("CAS temp space"); `fix` says how to get more.
  SpaceBudget(uint64_t limit_bytes, std::string what, std::string fix)
      : limit_(limit_bytes), what_(std::move(what)), fix_(std::move(fix)) {}

  // RESOURCE_EXHAUSTED, taking nothing, when `bytes` more would exceed the limit.
  absl::Status Take(uint64_t bytes);
  void Give(uint64_t bytes);
  uint64_t in_use();

 private:
  const uint64_t limit_;
  const std::string what_, fix_;
  absl::Mutex mu_;
  uint64_t used_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace farm
