// A simulated worker for the benchmarks: registers over real gRPC, leases with long polls and
// completes every lease at once (no-op actions), recording when each action was leased.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace farm::bench {

struct LeaseTimes {
  absl::Mutex mu;
  std::map<std::string, absl::Time> leased ABSL_GUARDED_BY(mu);
};

// Runs until `stop`; adds to `completed` what the coordinator accepted.
void SimulatedWorker(const std::string& address, const std::string& token, int index,
                     uint32_t slots, const std::atomic<bool>& stop, LeaseTimes& times,
                     std::atomic<int64_t>& completed);

}  // namespace farm::bench
