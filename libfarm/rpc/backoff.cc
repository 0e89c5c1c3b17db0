#include "libfarm/rpc/backoff.h"

#include <algorithm>

namespace farm {

Backoff::Backoff(absl::Duration initial, absl::Duration max, double multiplier, double jitter)
    : initial_(initial),
      max_(max),
      multiplier_(multiplier),
      jitter_(jitter),
      current_(initial),
      rng_(std::random_device{}()) {}

absl::Duration Backoff::Next() {
  absl::Duration base = current_;
  current_ = std::min(max_, current_ * multiplier_);
  // Jitter spreads reconnects of a fleet that lost its coordinator at the same moment.
  std::uniform_real_distribution<double> spread(1.0 - jitter_, 1.0 + jitter_);
  return std::min(max_, base * spread(rng_));
}

void Backoff::Reset() { current_ = initial_; }

}  // namespace farm
