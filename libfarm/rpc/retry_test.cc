#include "libfarm/rpc/retry.h"

#include <gtest/gtest.h>

#include <vector>

#include "absl/strings/str_cat.h"

namespace farm {
namespace {

using absl::StatusCode;

TEST(ClassifyFailureTest, EveryCodeHasItsKind) {
  struct Case {
    StatusCode code;
    FailureKind kind;
  };
  const std::vector<Case> cases = {
      {StatusCode::kUnavailable, FailureKind::kTransient},
      {StatusCode::kDeadlineExceeded, FailureKind::kTransient},
      {StatusCode::kAborted, FailureKind::kTransient},
      {StatusCode::kInternal, FailureKind::kCoordinatorFault},
      {StatusCode::kUnknown, FailureKind::kCoordinatorFault},
      {StatusCode::kCancelled, FailureKind::kCoordinatorFault},
      {StatusCode::kResourceExhausted, FailureKind::kCoordinatorFault},
      {StatusCode::kDataLoss, FailureKind::kCoordinatorFault},
      {StatusCode::kInvalidArgument, FailureKind::kCallerError},
      {StatusCode::kUnauthenticated, FailureKind::kCallerError},
      {StatusCode::kPermissionDenied, FailureKind::kCallerError},
      {StatusCode::kNotFound, FailureKind::kCallerError},
      {StatusCode::kAlreadyExists, FailureKind::kCallerError},
      {StatusCode::kFailedPrecondition, FailureKind::kCallerError},
      {StatusCode::kOutOfRange, FailureKind::kCallerError},
      {StatusCode::kUnimplemented, FailureKind::kCallerError},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ClassifyFailure(absl::Status(c.code, "x")), c.kind)
        << absl::StatusCodeToString(c.code);
  }
}

// A busy coordinator (its own answer, or gRPC's when no server thread is free) is
// back-pressure: retried by every caller. Its disk or CAS quota full is not.
TEST(ClassifyFailureTest, ABusyCoordinatorIsTransientAndOnlyThat) {
  const absl::Status busy =
      absl::UnavailableError(absl::StrCat(kCoordinatorBusy, ": 96 calls are waiting, its limit"));
  const absl::Status threads = absl::ResourceExhaustedError("Server Threadpool Exhausted");
  for (const absl::Status& s : {busy, threads}) {
    EXPECT_TRUE(IsCoordinatorBusy(s)) << s;
    EXPECT_EQ(ClassifyFailure(s), FailureKind::kTransient) << s;
    EXPECT_TRUE(RetryMayFix(s, Patience::kCommand)) << s;
  }
  const absl::Status full = absl::ResourceExhaustedError("the CAS quota is full of pinned blobs");
  EXPECT_FALSE(IsCoordinatorBusy(full));
  EXPECT_EQ(ClassifyFailure(full), FailureKind::kCoordinatorFault);
  // The coordinator away: transient, but not "busy" (the call may have run).
  EXPECT_FALSE(IsCoordinatorBusy(absl::UnavailableError("failed to connect to all addresses")));
  EXPECT_FALSE(IsCoordinatorBusy(absl::OkStatus()));
}

TEST(RetryMayFixTest, CommandsRetryTransientFailuresAndDaemonsAlsoCoordinatorFaults) {
  const absl::Status transient = absl::UnavailableError("coordinator restarting");
  const absl::Status fault = absl::InternalError("RocksDB error");
  const absl::Status caller = absl::UnauthenticatedError("unknown token");
  EXPECT_TRUE(RetryMayFix(transient, Patience::kCommand));
  EXPECT_TRUE(RetryMayFix(transient, Patience::kDaemon));
  EXPECT_FALSE(RetryMayFix(fault, Patience::kCommand));
  EXPECT_TRUE(RetryMayFix(fault, Patience::kDaemon));
  EXPECT_FALSE(RetryMayFix(caller, Patience::kCommand));
  EXPECT_FALSE(RetryMayFix(caller, Patience::kDaemon));
  EXPECT_FALSE(RetryMayFix(absl::OkStatus(), Patience::kDaemon));
}

// A fake clock that only the fake sleep moves: no test waits for real.
struct FakeTime {
  absl::Time now = absl::FromUnixSeconds(1000);
  std::vector<absl::Duration> waits;

  void Wire(RetryOptions& options) {
    options.now = [this] { return now; };
    options.sleep = [this](absl::Duration d) {
      waits.push_back(d);
      now += d;
    };
  }
};

// Fails with each status of `script` in turn, then succeeds; counts its calls.
struct ScriptedCall {
  std::vector<absl::Status> script;
  int calls = 0;

  absl::Status operator()() {
    const size_t i = static_cast<size_t>(calls++);
    return i < script.size() ? script[i] : absl::OkStatus();
  }
};

TEST(RetryTest, RetriesTransientFailuresUntilTheCallSucceeds) {
  FakeTime time;
  RetryOptions options;
  time.Wire(options);
  ScriptedCall call{{absl::UnavailableError("down"), absl::DeadlineExceededError("slow"),
                     absl::AbortedError("conflict")}};
  EXPECT_TRUE(Retry(options, std::ref(call)).ok());
  EXPECT_EQ(call.calls, 4);
  EXPECT_EQ(time.waits.size(), 3u);
}

// A call that must not run twice retries only what retry_only names: a busy coordinator, not
// the coordinator away (the call may have run).
TEST(RetryTest, RetryOnlyRetriesWhatItNamesAndNothingElse) {
  int calls = 0;
  const RetryOptions busy{.retry_only = IsCoordinatorBusy, .sleep = [](absl::Duration) {}};
  absl::Status s = Retry(busy, [&] {
    return ++calls < 3 ? absl::UnavailableError(absl::StrCat(kCoordinatorBusy, ": full"))
                       : absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(calls, 3);
  calls = 0;
  s = Retry(busy, [&] {
    ++calls;
    return absl::UnavailableError("failed to connect to all addresses");
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(calls, 1);
}

TEST(RetryTest, ACallersErrorEndsTheLoopAtOnce) {
  FakeTime time;
  RetryOptions options;
  time.Wire(options);
  options.patience = Patience::kDaemon;
  ScriptedCall call{{absl::PermissionDeniedError("role"), absl::UnavailableError("down")}};
  EXPECT_EQ(Retry(options, std::ref(call)).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(call.calls, 1);
  EXPECT_TRUE(time.waits.empty());
}

TEST(RetryTest, OnlyADaemonOutwaitsACoordinatorFault) {
  for (Patience patience : {Patience::kCommand, Patience::kDaemon}) {
    FakeTime time;
    RetryOptions options;
    time.Wire(options);
    options.patience = patience;
    ScriptedCall call{{absl::InternalError("RocksDB error")}};
    const absl::Status s = Retry(options, std::ref(call));
    if (patience == Patience::kDaemon) {
      EXPECT_TRUE(s.ok()) << s;
      EXPECT_EQ(call.calls, 2);
    } else {
      EXPECT_EQ(s.code(), StatusCode::kInternal);
      EXPECT_EQ(call.calls, 1);
    }
  }
}

TEST(RetryTest, ACallSiteMayRetryACodeItKnowsARetryFixes) {
  FakeTime time;
  RetryOptions options;
  time.Wire(options);
  options.also_retry = [](const absl::Status& s) { return s.code() == StatusCode::kNotFound; };
  ScriptedCall call{{absl::NotFoundError("session gone"), absl::NotFoundError("session gone")}};
  EXPECT_TRUE(Retry(options, std::ref(call)).ok());
  EXPECT_EQ(call.calls, 3);
}

TEST(RetryTest, StopsAfterMaxAttemptsWithTheLastFailure) {
  FakeTime time;
  RetryOptions options;
  time.Wire(options);
  options.max_attempts = 3;
  ScriptedCall call{{absl::UnavailableError("1"), absl::UnavailableError("2"),
                     absl::UnavailableError("3"), absl::UnavailableError("4")}};
  const absl::Status s = Retry(options, std::ref(call));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "3");
  EXPECT_EQ(call.calls, 3);
  EXPECT_EQ(time.waits.size(), 2u);
}

TEST(RetryTest, BacksOffBetweenAttemptsUpToItsMax) {
  FakeTime time;
  RetryOptions options;
  time.Wire(options);
  options.initial_backoff = absl::Milliseconds(100);
  options.max_backoff = absl::Milliseconds(300);
  ScriptedCall call{std::vector<absl::Status>(8, absl::UnavailableError("down"))};
  ASSERT_TRUE(Retry(options, std::ref(call)).ok());
  ASSERT_EQ(time.waits.size(), 8u);
  // Backoff's jitter spreads each wait by up to 20%.
  EXPECT_LE(time.waits.front(), absl::Milliseconds(120));
  EXPECT_GE(time.waits.back(), absl::Milliseconds(240));
  for (absl::Duration w : time.waits) EXPECT_LE(w, absl::Milliseconds(300));
}

TEST(RetryTest, ADeadlineCutsTheLastWaitShortAndEndsWithTheLastFailure) {
  FakeTime time;
  RetryOptions options;
  time.Wire(options);
  options.initial_backoff = absl::Seconds(1);
  options.max_backoff = absl::Seconds(1);
  const absl::Time start = time.now;
  options.deadline = start + absl::Milliseconds(2500);
  std::vector<absl::Time> attempts;
  const absl::Status s = Retry(options, [&] {
    attempts.push_back(time.now);
    return absl::UnavailableError(absl::StrCat("attempt ", attempts.size()));
  });
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), absl::StrCat("attempt ", attempts.size()));
  ASSERT_GE(attempts.size(), 3u);
  // The last attempt starts at the deadline, none after it.
  EXPECT_EQ(attempts.back(), options.deadline);
  for (absl::Duration w : time.waits) EXPECT_LE(w, absl::Milliseconds(1200));
}

TEST(RetryTest, ADeadlineAlreadyPassedAllowsOneAttempt) {
  FakeTime time;
  RetryOptions options;
  time.Wire(options);
  options.deadline = time.now - absl::Seconds(1);
  ScriptedCall call{{absl::UnavailableError("down")}};
  EXPECT_EQ(Retry(options, std::ref(call)).code(), StatusCode::kUnavailable);
  EXPECT_EQ(call.calls, 1);
}

TEST(RetryTest, TheStopSignalEndsTheWaitAndNoAttemptFollows) {
  absl::Notification stop;
  RetryOptions options;
  options.stop = &stop;
  // An hour's wait: the test would time out unless the stop signal ends it.
  options.initial_backoff = absl::Hours(1);
  options.max_backoff = absl::Hours(1);
  options.on_retry = [&](const RetryEvent&) { stop.Notify(); };
  ScriptedCall call{{absl::UnavailableError("down")}};
  const absl::Status s = Retry(options, std::ref(call));
  EXPECT_EQ(s.code(), StatusCode::kCancelled);
  EXPECT_NE(s.message().find("down"), absl::string_view::npos) << s;
  EXPECT_EQ(call.calls, 1);
}

TEST(RetryTest, AStopSignalAlreadyGivenMakesNoAttempt) {
  absl::Notification stop;
  stop.Notify();
  RetryOptions options;
  options.stop = &stop;
  ScriptedCall call;
  EXPECT_EQ(Retry(options, std::ref(call)).code(), StatusCode::kCancelled);
  EXPECT_EQ(call.calls, 0);
}

TEST(RetryTest, TheCallbackHearsOfEachRetryOnceWithItsFailureAndWait) {
  FakeTime time;
  RetryOptions options;
  time.Wire(options);
  std::vector<RetryEvent> events;
  options.on_retry = [&](const RetryEvent& e) { events.push_back(e); };
  ScriptedCall call{{absl::UnavailableError("a"), absl::UnavailableError("b")}};
  ASSERT_TRUE(Retry(options, std::ref(call)).ok());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].attempt, 1);
  EXPECT_EQ(events[0].failure.message(), "a");
  EXPECT_EQ(events[0].delay, time.waits[0]);
  EXPECT_EQ(events[1].attempt, 2);
  EXPECT_EQ(events[1].failure.message(), "b");
  EXPECT_EQ(events[1].delay, time.waits[1]);
}

TEST(RetryTest, TheCallbackIsNotCalledWithoutARetry) {
  FakeTime time;
  RetryOptions options;
  time.Wire(options);
  int calls = 0;
  options.on_retry = [&](const RetryEvent&) { ++calls; };
  ScriptedCall ok;
  ASSERT_TRUE(Retry(options, std::ref(ok)).ok());
  ScriptedCall refused{{absl::InvalidArgumentError("bad")}};
  ASSERT_FALSE(Retry(options, std::ref(refused)).ok());
  ScriptedCall last{{absl::UnavailableError("down")}};
  options.max_attempts = 1;
  ASSERT_FALSE(Retry(options, std::ref(last)).ok());
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace farm
