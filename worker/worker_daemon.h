// The worker's life: register, heartbeat, lease and run actions in its slots, survive
// coordinator outages, drain and leave.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "farm/v1/worker_service.grpc.pb.h"
#include "worker/action_executor.h"

namespace farm::worker {

struct DaemonOptions {
  std::string name;
  std::string token;
  std::string coordinator;  // for log lines
  std::string instance_id;  // from the work dir (work_dir_claim.h)
  absl::Duration rpc_timeout = absl::Seconds(5);
  absl::Duration max_backoff = absl::Seconds(10);
  absl::Duration lease_poll = absl::Seconds(5);  // how long one LeaseActions call may wait
  // How long a finished action's result is offered to an unreachable coordinator.
  absl::Duration report_patience = absl::Minutes(10);
  // After a failure, how long cancelled actions get to wind down before Run joins them.
  absl::Duration cancel_grace = absl::Seconds(30);
};

class WorkerDaemon {
 public:
  // The stub is injected so tests can drive the daemon against a fake coordinator.
  // `executor` may be null: the worker then only registers and heartbeats.
  WorkerDaemon(std::unique_ptr<farm::v1::WorkerService::StubInterface> stub, DaemonOptions options,
               farm::v1::WorkerCapabilities capabilities, ActionExecutor* executor = nullptr);

  // Runs until `stop` is notified, then drains (running actions finish and are reported)
  // and leaves. Returns an error only for what retrying cannot fix: a rejected token or a
  // refused registration.
  absl::Status Run(absl::Notification& stop);

 private:
  absl::Status RegisterUntilAccepted(absl::Notification& stop);
  absl::Status Heartbeat(bool draining);
  void Leave();
  void PrepareContext(grpc::ClientContext& ctx, absl::Duration timeout) const;
  std::string session() const;

  void LeaseLoop();
  void RunLease(farm::v1::Lease lease, std::shared_ptr<std::atomic<bool>> cancel);
  void Report(const farm::v1::Completion& completion);
  // A wheel build mostly waits for its device compiles on the farm, so it takes no compile
  // slot: a one-slot host can host a build and still compile for it.
  uint32_t CompileSlotsInUse() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::unique_ptr<farm::v1::WorkerService::StubInterface> stub_;
  const DaemonOptions options_;
  const farm::v1::WorkerCapabilities capabilities_;
  ActionExecutor* const executor_;
  absl::Duration heartbeat_interval_ = absl::Seconds(1);

  mutable absl::Mutex mu_;
  std::string session_id_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* lease_call_ ABSL_GUARDED_BY(mu_) = nullptr;  // to cut a long poll short
  // Running leases and their cancel flags.
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> running_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> wheel_builds_ ABSL_GUARDED_BY(mu_);  // lease ids among running_

  // One thread per lease, started and reaped by the lease loop's thread only; Run joins what
  // is left once that thread has stopped, so no lease thread outlives the daemon.
  struct LeaseThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;  // set as the thread's last step
  };
  void JoinLeaseThreads(bool finished_only);
  std::vector<LeaseThread> lease_threads_;
};

}  // namespace farm::worker
