// The fleet as the coordinator knows it: who registered, with what capabilities, and
// whether each worker is alive. Registrations and state changes are durable; heartbeat
// times live in memory (a restart gives every worker one timeout to reconnect).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/state_store.h"
#include "farm/v1/types.pb.h"

namespace farm::coordinator {

using Clock = std::function<absl::Time()>;

// Who a worker-service call says it is: a worker name and the session it registered, and
// the token (its id) the call carries.
struct WorkerCaller {
  std::string name;
  std::string session_id;
  std::string token_id;
};

struct WorkerCounts {
  uint32_t online = 0, draining = 0, lost = 0, offline = 0;
  uint32_t slots_online = 0;
};

class WorkerRegistry {
 public:
  WorkerRegistry(StateStore* store, absl::Duration timeout, Clock clock);

  // Reads the registry back from the store after a (re)start.
  absl::Status Load();

  // Records a worker process; returns its new session id (128 random bits, never listed).
  // ALREADY_EXISTS when another worker (another `instance_id`) holds `name` and was heard
  // from within the timeout: a second host with a taken name never takes over the first
  // one's session. `registered_by` is the caller's token id: a name is bound to the token
  // that first registered it, and PERMISSION_DENIED for any other token while that one is
  // valid (see SetTokenIsValid).
  absl::StatusOr<std::string> Register(const std::string& name,
                                       const farm::v1::WorkerCapabilities& capabilities,
                                       const std::string& peer, const std::string& instance_id,
                                       const std::string& registered_by);
  // Each call below is the worker's only if `caller` carries the token its name is bound to
  // (PERMISSION_DENIED naming the worker otherwise, whatever the session) and names its
  // current session. NOT_FOUND for an unknown worker, FAILED_PRECONDITION for a stale
  // session: both mean "register again". A refused call changes nothing.
  absl::Status Heartbeat(const WorkerCaller& caller, bool draining, uint32_t slots_in_use);
  absl::Status Leave(const WorkerCaller& caller);
  // The worker's capabilities, for a call that is its own.
  absl::StatusOr<farm::v1::WorkerCapabilities> SessionCapabilities(const WorkerCaller& caller);

  // Called (without the registry lock) when a worker's session ends: `died` when a new
  // process registered under the same name without the old one leaving.
  using SessionEnded =
      std::function<void(const std::string& name, const std::string& session, bool died)>;
  void SetSessionEndedHandler(SessionEnded handler);
  // Whether a token id is still valid (not revoked): a name bound to a revoked token is free
  // for the next token that registers it. Set once before serving; unset, names stay bound.
  void SetTokenIsValid(std::function<bool(const std::string& token_id)> is_valid);

  // Marks workers lost whose last heartbeat is older than the timeout.
  absl::Status Sweep();

  std::vector<farm::v1::Worker> List() const;
  std::vector<farm::v1::Worker> ListOnline() const;
  WorkerCounts Counts() const;
  absl::Duration timeout() const { return timeout_; }

 private:
  struct Entry {
    farm::v1::Worker record;  // as stored and listed
    std::string session_id;   // stored beside the record, never listed
    // Liveness clock: the last heartbeat, or the load time for a worker not yet heard from
    // since a restart (the coordinator was away, not the worker).
    absl::Time last_heard;
    bool heard_since_load = false;
  };
  static google::protobuf::Timestamp LastSeen(const Entry& entry);
  absl::Status SetState(Entry& entry, farm::v1::WorkerState state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<Entry*> FindSession(const WorkerCaller& caller) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes `record` with `session_id` beside it.
  absl::Status Store(const farm::v1::Worker& record, const std::string& session_id);

  StateStore* const store_;
  const absl::Duration timeout_;
  const Clock clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> workers_ ABSL_GUARDED_BY(mu_);
  SessionEnded session_ended_;                              // set once before serving
  std::function<bool(const std::string&)> token_is_valid_;  // set once before serving
};

}  // namespace farm::coordinator
