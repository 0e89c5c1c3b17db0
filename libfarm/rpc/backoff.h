// Exponential backoff with jitter, the one retry pacing used by every farm client.
#pragma once

#include <random>

#include "absl/time/time.h"

namespace farm {

class Backoff {
 public:
  Backoff(absl::Duration initial, absl::Duration max, double multiplier = 2.0, double jitter = 0.2);

  // The delay before the next attempt; grows until `max`.
  absl::Duration Next();
  // Call after a success so the next failure starts from `initial` again.
  void Reset();

 private:
  absl::Duration initial_;
  absl::Duration max_;
  double multiplier_;
  double jitter_;
  absl::Duration current_;
  std::mt19937_64 rng_;
};

}  // namespace farm
