// A simulated worker for the fleet simulator: registers over real gRPC with a host's shape
// (CPU arch, cores, RAM, slots, a CUDA toolkit), heartbeats, leases device actions, fetches
// their inputs from the CAS, "runs" each by sleeping the compressed duration its script
// names, uploads a small output blob per output and completes the lease.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/fleet_workload.h"
#include "farm/v1/types.pb.h"

namespace farm::bench {

// An instance type of the fleet.
struct HostShape {
  std::string type;  // "m8g.4xlarge"
  std::string cpu_arch;
  uint32_t cores = 0;
  double ram_gib = 0;
};

// m8g.4xlarge (16 vCPU, 64 GiB), m8g.8xlarge (32, 128), grace (72 cores, 480 GiB; GH200's
// Grace CPU), all aarch64. NOT_FOUND for other names.
absl::StatusOr<HostShape> KnownHostShape(const std::string& type);

// What the simulated device action's script says: `# farm-sim seconds=S peak_ram_mib=M`.
std::string SimulatedScript(const std::string& what, double seconds, double peak_ram_mib);

// One action as a worker ran it.
struct ExecutedAction {
  std::string action_id;
  std::string shard;
  int worker = 0;
  absl::Time leased, finished;
  double peak_ram_mib = 0;
};

// What every simulated worker reports, shared by all of them.
struct FleetLedger {
  absl::Mutex mu;
  std::vector<ExecutedAction> actions ABSL_GUARDED_BY(mu);
  // Per worker: the most RAM its running actions peaked at together, MiB.
  std::vector<double> peak_ram_in_use_mib ABSL_GUARDED_BY(mu);
  int registered ABSL_GUARDED_BY(mu) = 0;
  int64_t errors ABSL_GUARDED_BY(mu) = 0;
  // Calls the coordinator answered "busy" (IsCoordinatorBusy), sent again: not errors.
  int64_t busy_answers ABSL_GUARDED_BY(mu) = 0;
  std::string first_error ABSL_GUARDED_BY(mu);
};

struct SleepingWorkerConfig {
  std::string address, token;
  int index = 0;
  HostShape shape;
  uint32_t slots = 0;
  farm::v1::CudaToolkit toolkit;
  TimeScale scale;
  // Once set, the worker stops at once, neither completing its leases nor leaving: a host
  // that died. The coordinator finds it lost when its heartbeats stop.
  const std::atomic<bool>* vanish = nullptr;
};

// Runs until `stop`, then leaves.
void RunSleepingWorker(const SleepingWorkerConfig& config, const std::atomic<bool>& stop,
                       FleetLedger& ledger);

}  // namespace farm::bench
