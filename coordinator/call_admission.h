// How many long polls the coordinator keeps open at once. A long poll (ActionService.Wait: a
// launcher waiting for its compile) holds no server thread (scheduler/wait_pool.h), but memory
// and a place in every poll of the waits; a thousand-way build keeps a thousand open. Admission
// bounds them (--grpc-max-calls x 4), and each caller (a token: one build's launchers, one
// user's) to its fair share: the bound over the callers that hold places or were refused in
// the last few seconds, and never more than half, so a build that comes later finds room
// as the others' waits end. The rest are answered UNAVAILABLE "busy" at once, which every
// farm client retries after a pause: back-pressure, never a failed compile.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator {

class CallAdmission {
 public:
  // At most `max_waiting` long polls; a caller's share at most half of them. `metrics` is
  // not owned (may be null).
  CallAdmission(int max_waiting, MetricsRegistry* metrics);

  // A long poll taken on; gives its place back when destroyed.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&& other) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket();

   private:
    friend class CallAdmission;
    Ticket(CallAdmission* admission, std::string caller)
        : admission_(admission), caller_(std::move(caller)) {}
    CallAdmission* admission_;
    std::string caller_;
  };

  // A place for one long poll of `caller` (its token id), or UNAVAILABLE naming the limit
  // that was reached (a farm client's retry loop waits and tries again).
  absl::StatusOr<Ticket> AdmitLongPoll(const std::string& caller);

  int max_waiting() const { return max_waiting_; }
  int max_waiting_per_caller() const { return max_per_caller_; }
  int waiting() const;

 private:
  void Release(const std::string& caller);
  // farm_rpc_waiting_calls, set to waiting_.
  void ShowWaiting() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int max_waiting_;
  const int max_per_caller_;
  MetricsRegistry* metrics_;
  mutable absl::Mutex mu_;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> per_caller_ ABSL_GUARDED_BY(mu_);
  // Callers refused, and when: for this long they count among those wanting a place.
  static constexpr absl::Duration kRefusedMemory = absl::Seconds(5);
  std::map<std::string, absl::Time> refused_lately_ ABSL_GUARDED_BY(mu_);
};

}  // namespace farm::coordinator
