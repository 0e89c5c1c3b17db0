#include "libfarm/rpc/retry.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/rpc/backoff.h"

namespace farm {

bool IsCoordinatorBusy(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      return absl::StartsWith(status.message(), kCoordinatorBusy);
    case absl::StatusCode::kResourceExhausted:
      // gRPC's synchronous server, when no thread is free for the call (server_cc.cc).
      return status.message() == "Server Threadpool Exhausted";
    default:
      return false;
  }
}

FailureKind ClassifyFailure(const absl::Status& status) {
  if (IsCoordinatorBusy(status)) return FailureKind::kTransient;
  switch (status.code()) {
    // Not a failure: nothing to retry.
    case absl::StatusCode::kOk:
      return FailureKind::kCallerError;

    // The coordinator is away, restarting, or unreachable for now; the channel dials again.
    case absl::StatusCode::kUnavailable:
    // The call's deadline passed: the coordinator slow or hung for a moment, a lost packet.
    case absl::StatusCode::kDeadlineExceeded:
    // A conflict with a concurrent change: the next attempt sees the new state.
    case absl::StatusCode::kAborted:
      return FailureKind::kTransient;

    // The coordinator failed on its side (a storage error); gRPC also reports some transport
    // faults (a reset stream) so.
    case absl::StatusCode::kInternal:
    // gRPC's code for what it could not classify, e.g. a stream cut mid-call; the coordinator
    // itself never answers it.
    case absl::StatusCode::kUnknown:
    // The coordinator cut the call (it was shutting down); a call this process cancels ends
    // its loop through the loop's stop signal instead.
    case absl::StatusCode::kCancelled:
    // The coordinator is out of room: its disk full, or the CAS quota full of pinned blobs.
    // Room comes back as an operator or finishing actions make it. (Every server thread
    // taken is back-pressure instead, handled above.)
    case absl::StatusCode::kResourceExhausted:
    // The coordinator's state or a blob is damaged: an operator repairs or restores it.
    case absl::StatusCode::kDataLoss:
      return FailureKind::kCoordinatorFault;

    // The request is malformed or over a limit: the same request is refused again.
    case absl::StatusCode::kInvalidArgument:
    // No token the coordinator knows: only another token file fixes it.
    case absl::StatusCode::kUnauthenticated:
    // The token's role may not make the call, or the worker name is bound to another token.
    case absl::StatusCode::kPermissionDenied:
    // The call names what the coordinator does not have (a blob, an action, a worker). The
    // worker's heartbeat handles its own unknown session by registering again.
    case absl::StatusCode::kNotFound:
    // The name is taken, by another live worker for one.
    case absl::StatusCode::kAlreadyExists:
    // The caller's state does not allow the call (a replaced session, a finished build). The
    // worker handles its session itself, and Register the coordinator's full disk.
    case absl::StatusCode::kFailedPrecondition:
    // A read past the end, e.g. a download offset beyond the blob.
    case absl::StatusCode::kOutOfRange:
    // The coordinator does not offer the call (an older version, or one that runs no
    // actions): only an upgrade or another coordinator fixes it.
    case absl::StatusCode::kUnimplemented:
      return FailureKind::kCallerError;

    default:
      // A code newer than this build: something failed on the other side.
      return FailureKind::kCoordinatorFault;
  }
}

bool RetryMayFix(const absl::Status& status, Patience patience) {
  if (status.ok()) return false;
  switch (ClassifyFailure(status)) {
    case FailureKind::kTransient:
      return true;
    case FailureKind::kCoordinatorFault:
      return patience == Patience::kDaemon;
    case FailureKind::kCallerError:
      return false;
  }
  return false;
}

absl::Status Retry(const RetryOptions& options, const std::function<absl::Status()>& attempt) {
  auto now = [&] { return options.now ? options.now() : absl::Now(); };
  auto stopped = [&] { return options.stop != nullptr && options.stop->HasBeenNotified(); };
  auto wait = [&](absl::Duration delay) {
    if (options.sleep) {
      options.sleep(delay);
    } else if (options.stop != nullptr) {
      options.stop->WaitForNotificationWithTimeout(delay);
    } else {
      absl::SleepFor(delay);
    }
  };
  if (stopped()) return absl::CancelledError("stopped before the first attempt");
  Backoff backoff(options.initial_backoff, options.max_backoff);
  for (int n = 1;; ++n) {
    absl::Status failure = attempt();
    if (failure.ok()) return failure;
    const bool retry = options.retry_only ? options.retry_only(failure)
                                          : RetryMayFix(failure, options.patience) ||
                                                (options.also_retry && options.also_retry(failure));
    if (!retry) return failure;
    if (options.max_attempts > 0 && n >= options.max_attempts) return failure;
    const absl::Time at = now();
    if (at >= options.deadline) return failure;
    const absl::Duration delay = std::min(backoff.Next(), options.deadline - at);
    if (options.on_retry) options.on_retry(RetryEvent{failure, n, delay});
    wait(delay);
    if (stopped()) {
      return absl::CancelledError(
          absl::StrCat("stopped while retrying; the last attempt failed: ", failure.message()));
    }
  }
}

}  // namespace farm
