#include "worker/worker_daemon.h"

#include <chrono>
#include <thread>

#include "libfarm/disk/disk_space.h"
#include "libfarm/logging/logger.h"
#include "libfarm/rpc/backoff.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/retry.h"
#include "libfarm/rpc/token_auth.h"
#include "libfarm/text/utf8_fields.h"

namespace farm::worker {
namespace {

// The coordinator no longer knows this session (NOT_FOUND: the worker was forgotten;
// FAILED_PRECONDITION: another registration replaced it): registering again fixes it.
bool MustRegisterAgain(const absl::Status& s) {
  return s.code() == absl::StatusCode::kNotFound ||
         s.code() == absl::StatusCode::kFailedPrecondition;
}

}  // namespace

WorkerDaemon::WorkerDaemon(std::unique_ptr<farm::v1::WorkerService::StubInterface> stub,
                           DaemonOptions options, farm::v1::WorkerCapabilities capabilities,
                           ActionExecutor* executor)
    : stub_(std::move(stub)),
      options_(std::move(options)),
      capabilities_(std::move(capabilities)),
      executor_(executor) {}

void WorkerDaemon::PrepareContext(grpc::ClientContext& ctx, absl::Duration timeout) const {
  AttachToken(ctx, options_.token);
  ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
}

std::string WorkerDaemon::session() const {
  absl::MutexLock lock(&mu_);
  return session_id_;
}

absl::Status WorkerDaemon::RegisterUntilAccepted(absl::Notification& stop) {
  auto log = ComponentLogger("worker");
  const RetryOptions retry{
      .initial_backoff = absl::Milliseconds(200),
      .max_backoff = options_.max_backoff,
      .patience = Patience::kDaemon,
      .stop = &stop,
      // FAILED_PRECONDITION from Register is the coordinator's full disk (it could not store
      // the registration, and logs so): space freed there lets us in, like an outage ending.
      .also_retry =
          [](const absl::Status& s) { return s.code() == absl::StatusCode::kFailedPrecondition; },
      .on_retry =
          [&](const RetryEvent& e) {
            if (e.attempt > 1) return;
            log->warn("cannot register with {} ({}); retrying with backoff", options_.coordinator,
                      e.failure.message());
          },
  };
  farm::v1::RegisterResponse resp;
  absl::Status s = Retry(retry, [&] {
    grpc::ClientContext ctx;
    PrepareContext(ctx, options_.rpc_timeout);
    farm::v1::RegisterRequest req;
    req.set_name(options_.name);
    req.set_instance_id(options_.instance_id);
    *req.mutable_capabilities() = capabilities_;
    resp.Clear();
    return FromGrpcStatus(stub_->Register(&ctx, req, &resp));
  });
  if (s.code() == absl::StatusCode::kAlreadyExists) {
    // Another live worker holds the name: retrying would only take it over when that one
    // dies. A configuration problem (exit 2), like any other.
    return absl::FailedPreconditionError(s.message());
  }
  // The caller's own error (a rejected token, a refused name), or CANCELLED when stopped.
  if (!s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    session_id_ = resp.session_id();
  }
  heartbeat_interval_ = absl::Milliseconds(resp.heartbeat_interval_ms());
  log->info("registered with {} as '{}' ({} slots)", options_.coordinator, options_.name,
            capabilities_.slots());
  return absl::OkStatus();
}

absl::Status WorkerDaemon::Heartbeat(bool draining) {
  grpc::ClientContext ctx;
  PrepareContext(ctx, options_.rpc_timeout);
  farm::v1::HeartbeatRequest req;
  req.set_name(options_.name);
  req.set_draining(draining);
  {
    absl::MutexLock lock(&mu_);
    req.set_session_id(session_id_);
    req.set_slots_in_use(static_cast<uint32_t>(running_.size()));
    for (const auto& [lease_id, cancel] : running_) req.add_lease_ids(lease_id);
  }
  farm::v1::HeartbeatResponse resp;
  absl::Status s = FromGrpcStatus(stub_->Heartbeat(&ctx, req, &resp));
  if (s.ok() && resp.heartbeat_interval_ms() > 0) {
    heartbeat_interval_ = absl::Milliseconds(resp.heartbeat_interval_ms());
  }
  if (s.ok() && resp.revoked_lease_ids_size() > 0) {
    absl::MutexLock lock(&mu_);
    for (const auto& id : resp.revoked_lease_ids()) {
      auto it = running_.find(id);
      if (it == running_.end()) continue;
      ComponentLogger("worker")->info("lease {} revoked by the coordinator; stopping it", id);
      it->second->store(true);
    }
  }
  return s;
}

void WorkerDaemon::Leave() {
  grpc::ClientContext ctx;
  PrepareContext(ctx, options_.rpc_timeout);
  farm::v1::LeaveRequest req;
  req.set_name(options_.name);
  req.set_session_id(session());
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

void WorkerDaemon::LeaseLoop() {
  auto log = ComponentLogger("worker");
  Backoff backoff(absl::Milliseconds(200), options_.max_backoff);
  while (true) {
    uint32_t free = 0;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return draining_ || CompileSlotsInUse() < capabilities_.slots();
      };
      mu_.Await(absl::Condition(&ready));
      if (draining_) return;
      free = capabilities_.slots() - CompileSlotsInUse();
    }
    grpc::ClientContext ctx;
    PrepareContext(ctx, options_.lease_poll + options_.rpc_timeout);
    farm::v1::LeaseActionsRequest req;
    req.set_name(options_.name);
    req.set_free_slots(free);
    req.set_wait_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(options_.lease_poll)));
    {
      absl::MutexLock lock(&mu_);
      if (draining_) return;
      req.set_session_id(session_id_);
      lease_call_ = &ctx;
    }
    farm::v1::LeaseActionsResponse resp;
    absl::Status s = FromGrpcStatus(stub_->LeaseActions(&ctx, req, &resp));
    {
      absl::MutexLock lock(&mu_);
      lease_call_ = nullptr;
    }
    if (!s.ok()) {
      // Outages, re-registration and rejected tokens are the heartbeat loop's business: this
      // loop judges no failure, it only waits (paced, and cut short by draining, a mutex
      // condition rather than a stop signal) and polls again, so it is no Retry.
      if (s.code() != absl::StatusCode::kCancelled) {
        log->debug("LeaseActions: {}", s.message());
      }
      absl::MutexLock lock(&mu_);
      auto draining = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return draining_; };
      mu_.AwaitWithTimeout(absl::Condition(&draining), backoff.Next());
      continue;
    }
    backoff.Reset();
    JoinLeaseThreads(/*finished_only=*/true);
    for (auto& lease : *resp.mutable_leases()) {
      auto cancel = std::make_shared<std::atomic<bool>>(false);
      {
        absl::MutexLock lock(&mu_);
        running_[lease.lease_id()] = cancel;
        if (lease.action().has_wheel_build()) wheel_builds_.insert(lease.lease_id());
      }
      log->info("running action {} (lease {}, build '{}', shard '{}')", lease.action_id(),
                lease.lease_id(), lease.action().build_id(), lease.action().shard());
      auto done = std::make_shared<std::atomic<bool>>(false);
      lease_threads_.push_back({std::thread([this, l = std::move(lease), cancel, done]() mutable {
                                  RunLease(std::move(l), cancel);
                                  done->store(true);
                                }),
                                done});
    }
  }
}

void WorkerDaemon::JoinLeaseThreads(bool finished_only) {
  for (auto it = lease_threads_.begin(); it != lease_threads_.end();) {
    if (finished_only && !it->done->load()) {
      ++it;
      continue;
    }
    it->thread.join();
    it = lease_threads_.erase(it);
  }
}

void WorkerDaemon::RunLease(farm::v1::Lease lease, std::shared_ptr<std::atomic<bool>> cancel) {
  farm::v1::Completion completion = executor_->Execute(lease, *cancel);
  if (!completion.infra_error().empty()) {
    // A full work dir fails every action: the operator hears of it once a minute, with the path.
    static DiskFullReporter* const disk_full =
        new DiskFullReporter(ComponentLogger("worker"), absl::Minutes(1));
    disk_full->Report(absl::InternalError(completion.infra_error()));
  }
  if (!cancel->load()) Report(completion);
  absl::MutexLock lock(&mu_);
  running_.erase(lease.lease_id());
  wheel_builds_.erase(lease.lease_id());
}

uint32_t WorkerDaemon::CompileSlotsInUse() const {
  return static_cast<uint32_t>(running_.size() - wheel_builds_.size());
}

void WorkerDaemon::Report(const farm::v1::Completion& completion) {
  auto log = ComponentLogger("worker");
  const RetryOptions retry{
      .deadline = absl::Now() + options_.report_patience,
      .initial_backoff = absl::Milliseconds(200),
      .max_backoff = options_.max_backoff,
      .patience = Patience::kDaemon,
      // The session was replaced or forgotten: the heartbeat loop is registering again, and
      // the next attempt carries the new session.
      .also_retry = MustRegisterAgain,
  };
  // Output tails, error text and file names can hold any bytes; the coordinator cannot parse
  // a string that is not UTF-8 and would refuse the whole report, leaving the action RUNNING
  // until its lease ran out. The full output keeps its bytes in the CAS.
  farm::v1::Completion sendable = completion;
  if (const int escaped = EscapeInvalidUtf8Fields(&sendable); escaped > 0) {
    log->debug("lease {}: {} text field(s) not UTF-8, sent escaped", completion.lease_id(),
               escaped);
  }
  farm::v1::CompleteActionsResponse resp;
  absl::Status s = Retry(retry, [&] {
    grpc::ClientContext ctx;
    PrepareContext(ctx, options_.rpc_timeout);
    farm::v1::CompleteActionsRequest req;
    req.set_name(options_.name);
    req.set_session_id(session());
    *req.add_completions() = sendable;
    resp.Clear();
    return FromGrpcStatus(stub_->CompleteActions(&ctx, req, &resp));
  });
  if (!s.ok()) {
    log->error("could not report lease {}: {}", completion.lease_id(), s.message());
    return;
  }
  if (resp.rejected_lease_ids_size() > 0) {
    log->info("result of lease {} not taken: the lease was revoked", completion.lease_id());
  }
}

absl::Status WorkerDaemon::Run(absl::Notification& stop) {
  auto log = ComponentLogger("worker");
  if (absl::Status s = RegisterUntilAccepted(stop); !s.ok()) {
    return s.code() == absl::StatusCode::kCancelled ? absl::OkStatus() : s;
  }
  std::thread leaser;
  if (executor_ != nullptr) leaser = std::thread([this] { LeaseLoop(); });
  auto stop_leasing = [&] {
    {
      absl::MutexLock lock(&mu_);
      draining_ = true;
      if (lease_call_ != nullptr) lease_call_->TryCancel();
    }
    if (leaser.joinable()) leaser.join();
  };

  // The heartbeat is a ticker that is also the reconnect loop: a success does not end it, a
  // lost session sends it back to RegisterUntilAccepted, and its pace switches between the
  // heartbeat interval and the backoff. So it is no Retry; it asks the same classification.
  Backoff backoff(absl::Milliseconds(200), options_.max_backoff);
  bool connected = true;
  absl::Status failure;
  while (!stop.WaitForNotificationWithTimeout(connected ? heartbeat_interval_ : backoff.Next())) {
    absl::Status s = Heartbeat(/*draining=*/false);
    if (s.ok()) {
      if (!connected) log->info("reconnected to {}", options_.coordinator);
      connected = true;
      backoff.Reset();
      continue;
    }
    if (MustRegisterAgain(s)) {
      log->info("coordinator asked us to register again: {}", s.message());
      if (absl::Status r = RegisterUntilAccepted(stop); !r.ok()) {
        if (r.code() != absl::StatusCode::kCancelled) failure = r;
        break;
      }
      connected = true;
      continue;
    }
    if (!RetryMayFix(s, Patience::kDaemon)) {
      failure = s;
      break;
    }
    if (connected) {
      log->warn("lost the coordinator at {} ({}); retrying with backoff", options_.coordinator,
                s.message());
    }
    connected = false;
  }
  // Drain: take no new work, keep renewing the leases we hold until they are reported.
  stop_leasing();
  if (!failure.ok()) {
    // Nothing we run could be reported: stop it rather than leave compilers behind.
    {
      absl::MutexLock lock(&mu_);
      for (auto& [id, cancel] : running_) cancel->store(true);
      auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return running_.empty(); };
      mu_.AwaitWithTimeout(absl::Condition(&idle), options_.cancel_grace);
    }
    JoinLeaseThreads(/*finished_only=*/false);
    return failure;
  }
  log->info("draining: taking no new work");
  while (true) {
    if (absl::Status s = Heartbeat(/*draining=*/true); !s.ok()) {
      log->warn("heartbeat while draining: {}", s.message());
    }
    absl::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return running_.empty(); };
    if (mu_.AwaitWithTimeout(absl::Condition(&idle), heartbeat_interval_)) break;
  }
  Leave();
  JoinLeaseThreads(/*finished_only=*/false);
  return absl::OkStatus();
}

}  // namespace farm::worker
