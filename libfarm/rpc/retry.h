// Which failed calls to the coordinator a retry may fix, and the one loop every farm client
// retries its calls with (paced by Backoff). A call site may handle a code it knows better
// itself (the worker registers again when its session was replaced) before it asks here.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace farm {

// What a retry can do about a failed call, by its status code (the reasons are in retry.cc).
enum class FailureKind {
  // The coordinator away, restarting or slow, or a conflict: the same call may succeed soon.
  kTransient,
  // The coordinator failed on its side, ran out of room, or cut the call: the same call may
  // succeed once it is fixed or restarted, which a daemon outwaits and a command does not.
  kCoordinatorFault,
  // The caller's own error (its request, token, name or state): the same call fails again.
  kCallerError,
};

// The kind of `status`'s failure. OK is no failure: kCallerError (nothing to retry).
FailureKind ClassifyFailure(const absl::Status& status);

// How a coordinator's refusal of a call it has no room for now begins (UNAVAILABLE; see
// coordinator/call_admission.h).
inline constexpr char kCoordinatorBusy[] = "the coordinator is busy";

// Whether the coordinator refused the call for want of room now, before running any of it:
// its own "busy" answer, or gRPC's RESOURCE_EXHAUSTED "Server Threadpool Exhausted" when every
// server thread is taken. Back-pressure, transient: the same call succeeds once others end,
// and a call that creates something (ActionService.Execute) may be sent again.
bool IsCoordinatorBusy(const absl::Status& status);

// How long a caller is prepared to wait for the coordinator.
enum class Patience {
  kCommand,  // farmctl, farm-nvcc, the CAS and action clients: a user or a build is waiting
  kDaemon,   // the worker's own calls: it exists to serve the farm, so it outwaits the coordinator
};

// Whether retrying may fix `status` for a caller with `patience`: transient failures for
// every caller, coordinator faults only for a daemon, the caller's errors never.
bool RetryMayFix(const absl::Status& status, Patience patience = Patience::kCommand);

// One failed attempt, about to be retried.
struct RetryEvent {
  absl::Status failure;
  int attempt = 0;       // the failed attempt's number, 1 for the first
  absl::Duration delay;  // the wait before the next attempt
};

struct RetryOptions {
  // Attempts in all, the first included; 0: no limit.
  int max_attempts = 0;
  // No retry starts after this; a wait that would pass it is cut short, so the last attempt
  // starts at it.
  absl::Time deadline = absl::InfiniteFuture();
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(10);
  Patience patience = Patience::kCommand;
  // When notified, the wait ends at once and no attempt follows: the loop returns CANCELLED.
  absl::Notification* stop = nullptr;
  // Failures this call site knows a retry fixes although RetryMayFix says no, each with its
  // reason at the call site.
  std::function<bool(const absl::Status&)> also_retry;
  // When set, the only failures retried (RetryMayFix and also_retry are not asked): for a call
  // that must not be sent again once it may have run, IsCoordinatorBusy.
  std::function<bool(const absl::Status&)> retry_only;
  // Called before each wait, e.g. to log "lost the coordinator; retrying" on attempt 1 only.
  std::function<void(const RetryEvent&)> on_retry;
  // For tests: the clock, and the wait between attempts (by default a wait on `stop`, or a
  // sleep without it).
  std::function<absl::Time()> now;
  std::function<void(absl::Duration)> sleep;
};

// Runs `attempt` until it succeeds or fails in a way no retry fixes (that status), runs out of
// attempts or time (the last failure), or is stopped (CANCELLED, naming the last failure).
absl::Status Retry(const RetryOptions& options, const std::function<absl::Status()>& attempt);

}  // namespace farm
