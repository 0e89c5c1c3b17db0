// Simulated workers for the benchmarks, over real gRPC. SimulatedWorker completes every lease
// at once (no-op actions), recording when each action was leased; RegisterSimulatedWorker is
// the registration it and the fleet simulator's sleeping workers share.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "farm/v1/worker_service.grpc.pb.h"

namespace farm::bench {

struct LeaseTimes {
  absl::Mutex mu;
  std::map<std::string, absl::Time> leased ABSL_GUARDED_BY(mu);
};

// A registered worker session: what every later WorkerService call names.
struct SimulatedSession {
  std::unique_ptr<farm::v1::WorkerService::Stub> stub;
  std::string name;
  std::string session_id;
  absl::Duration heartbeat_interval;
};

absl::StatusOr<SimulatedSession> RegisterSimulatedWorker(
    const std::string& address, const std::string& token, const std::string& name,
    const farm::v1::WorkerCapabilities& capabilities);

// Runs until `stop`; adds to `completed` what the coordinator accepted.
void SimulatedWorker(const std::string& address, const std::string& token, int index,
                     uint32_t slots, const std::atomic<bool>& stop, LeaseTimes& times,
                     std::atomic<int64_t>& completed);

}  // namespace farm::bench
