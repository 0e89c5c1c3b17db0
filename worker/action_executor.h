// Runs one leased action to a Completion. The daemon owns slots and leases; an executor
// only runs. Interface so the daemon can be tested without compilers or a CAS.
#pragma once

#include <atomic>

#include "farm/v1/worker_service.pb.h"

namespace farm::worker {

class ActionExecutor {
 public:
  virtual ~ActionExecutor() = default;
  // `cancel` turns true when the lease is revoked; the executor should stop quickly.
  virtual farm::v1::Completion Execute(const farm::v1::Lease& lease,
                                       const std::atomic<bool>& cancel) = 0;
};

}  // namespace farm::worker
