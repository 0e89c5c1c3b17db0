#include "worker/worker_daemon.h"

#include <chrono>

#include "libfarm/logging/logger.h"
#include "libfarm/rpc/backoff.h"
#include "libfarm/rpc/token_auth.h"
#include "libfarm/status/grpc_status.h"

namespace farm::worker {
namespace {

// Errors that retrying will not fix.
bool IsPermanent(const absl::Status& s) {
  return s.code() == absl::StatusCode::kUnauthenticated ||
         s.code() == absl::StatusCode::kPermissionDenied ||
         s.code() == absl::StatusCode::kInvalidArgument;
}

bool MustRegisterAgain(const absl::Status& s) {
  return s.code() == absl::StatusCode::kNotFound ||
         s.code() == absl::StatusCode::kFailedPrecondition;
}

}  // namespace

WorkerDaemon::WorkerDaemon(std::unique_ptr<farm::v1::WorkerService::StubInterface> stub,
                           DaemonOptions options, farm::v1::WorkerCapabilities capabilities)
    : stub_(std::move(stub)),
      options_(std::move(options)),
      capabilities_(std::move(capabilities)) {}

void WorkerDaemon::PrepareContext(grpc::ClientContext& ctx) const {
  AttachToken(ctx, options_.token);
  ctx.set_deadline(std::chrono::system_clock::now() +
                   absl::ToChronoMilliseconds(options_.rpc_timeout));
}

absl::Status WorkerDaemon::RegisterUntilAccepted(absl::Notification& stop) {
  auto log = ComponentLogger("worker");
  Backoff backoff(absl::Milliseconds(200), options_.max_backoff);
  bool reported_outage = false;
  while (!stop.HasBeenNotified()) {
    grpc::ClientContext ctx;
    PrepareContext(ctx);
    farm::v1::RegisterRequest req;
    req.set_name(options_.name);
    *req.mutable_capabilities() = capabilities_;
    farm::v1::RegisterResponse resp;
    absl::Status s = FromGrpcStatus(stub_->Register(&ctx, req, &resp));
    if (s.ok()) {
      session_id_ = resp.session_id();
      heartbeat_interval_ = absl::Milliseconds(resp.heartbeat_interval_ms());
      log->info("registered with {} as '{}' ({} slots)", options_.coordinator, options_.name,
                capabilities_.slots());
      return absl::OkStatus();
    }
    if (IsPermanent(s)) return s;
    if (!reported_outage) {
      log->warn("cannot register with {} ({}); retrying with backoff", options_.coordinator,
                s.message());
      reported_outage = true;
    }
    stop.WaitForNotificationWithTimeout(backoff.Next());
  }
  return absl::CancelledError("stopped before registering");
}

absl::Status WorkerDaemon::Heartbeat(bool draining) {
  grpc::ClientContext ctx;
  PrepareContext(ctx);
  farm::v1::HeartbeatRequest req;
  req.set_name(options_.name);
  req.set_session_id(session_id_);
  req.set_draining(draining);
  farm::v1::HeartbeatResponse resp;
  absl::Status s = FromGrpcStatus(stub_->Heartbeat(&ctx, req, &resp));
  if (s.ok() && resp.heartbeat_interval_ms() > 0) {
    heartbeat_interval_ = absl::Milliseconds(resp.heartbeat_interval_ms());
  }
  return s;
}

void WorkerDaemon::Leave() {
  grpc::ClientContext ctx;
  PrepareContext(ctx);
  farm::v1::LeaveRequest req;
  req.set_name(options_.name);
  req.set_session_id(session_id_);
  farm::v1::LeaveResponse resp;
  absl::Status s = FromGrpcStatus(stub_->Leave(&ctx, req, &resp));
  auto log = ComponentLogger("worker");
  if (s.ok()) {
    log->info("left the farm cleanly");
  } else {
    log->warn("could not tell the coordinator we are leaving ({}); it will mark us lost",
              s.message());
  }
}

absl::Status WorkerDaemon::Run(absl::Notification& stop) {
  auto log = ComponentLogger("worker");
  if (absl::Status s = RegisterUntilAccepted(stop); !s.ok()) {
    return s.code() == absl::StatusCode::kCancelled ? absl::OkStatus() : s;
  }
  Backoff backoff(absl::Milliseconds(200), options_.max_backoff);
  bool connected = true;
  while (!stop.WaitForNotificationWithTimeout(connected ? heartbeat_interval_ : backoff.Next())) {
    absl::Status s = Heartbeat(/*draining=*/false);
    if (s.ok()) {
      if (!connected) log->info("reconnected to {}", options_.coordinator);
      connected = true;
      backoff.Reset();
      continue;
    }
    if (IsPermanent(s)) return s;
    if (MustRegisterAgain(s)) {
      log->info("coordinator asked us to register again: {}", s.message());
      if (absl::Status r = RegisterUntilAccepted(stop); !r.ok()) {
        return r.code() == absl::StatusCode::kCancelled ? absl::OkStatus() : r;
      }
      connected = true;
      continue;
    }
    if (connected) {
      log->warn("lost the coordinator at {} ({}); retrying with backoff", options_.coordinator,
                s.message());
    }
    connected = false;
  }
  // Drain: announce it, let running work finish (none is leased yet), then leave.
  log->info("draining: taking no new work");
  if (absl::Status s = Heartbeat(/*draining=*/true); !s.ok()) {
    log->warn("could not announce draining: {}", s.message());
  }
  Leave();
  return absl::OkStatus();
}

}  // namespace farm::worker
