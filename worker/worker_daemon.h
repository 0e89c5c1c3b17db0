// The worker's life: register, heartbeat, survive coordinator outages, drain and leave.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "farm/v1/worker_service.grpc.pb.h"

namespace farm::worker {

struct DaemonOptions {
  std::string name;
  std::string token;
  std::string coordinator;  // for log lines
  absl::Duration rpc_timeout = absl::Seconds(5);
  absl::Duration max_backoff = absl::Seconds(10);
};

class WorkerDaemon {
 public:
  // The stub is injected so tests can drive the daemon against a fake coordinator.
  WorkerDaemon(std::unique_ptr<farm::v1::WorkerService::StubInterface> stub, DaemonOptions options,
               farm::v1::WorkerCapabilities capabilities);

  // Runs until `stop` is notified, then drains and leaves. Returns an error only for what
  // retrying cannot fix: a rejected token or a refused registration.
  absl::Status Run(absl::Notification& stop);

 private:
  absl::Status RegisterUntilAccepted(absl::Notification& stop);
  absl::Status Heartbeat(bool draining);
  void Leave();
  void PrepareContext(grpc::ClientContext& ctx) const;

  std::unique_ptr<farm::v1::WorkerService::StubInterface> stub_;
  DaemonOptions options_;
  farm::v1::WorkerCapabilities capabilities_;
  std::string session_id_;
  absl::Duration heartbeat_interval_ = absl::Seconds(1);
};

}  // namespace farm::worker
