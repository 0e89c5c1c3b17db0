// The action scheduler: a durable queue of actions, leases to qualified workers, retries,
// cancellation, in-flight deduplication within a build, and the action cache.
//
// Every transition is written to RocksDB before the caller is answered. Writes happen
// outside the lock so concurrent calls share one sync (RocksDB group commit); an action
// with a write in flight is invisible to leasing and waits until it lands.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/scheduler/action_history.h"
#include "coordinator/scheduler/action_observer.h"
#include "coordinator/scheduler/blob_index.h"
#include "coordinator/scheduler/history_scope.h"
#include "coordinator/scheduler/requirements.h"
#include "coordinator/state_store.h"
#include "farm/v1/state.pb.h"
#include "farm/v1/types.pb.h"
#include "farm/v1/worker_service.pb.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator {

// The order of a build's queue. Builds are served round-robin either way.
enum class QueueOrder {
  kFifo,  // oldest first
  // Longest expected first (ActionHistory), then oldest: the actions submitted together (one
  // translation unit's archs) are ranked by the longest of them and stay in their order.
  kLongestFirst,
};

struct SchedulerOptions {
  absl::Duration lease_ttl = absl::Seconds(30);
  // A lease found running at start lasts at least this long: the coordinator was away, not
  // the worker, which reconnects with a backoff of up to 10 s (worker_daemon.h) and must not
  // lose its work to a short --worker-timeout meanwhile (the action would run twice).
  absl::Duration restart_lease_grace = absl::Seconds(30);
  absl::Duration default_timeout = absl::Hours(1);
  // An action whose workers die this often while running it is failed, not retried.
  uint32_t max_worker_deaths = 3;
  // Leases handed out before an action is given up, whatever the cause.
  uint32_t max_attempts = 10;
  PlacementPolicy placement;
  QueueOrder queue_order = QueueOrder::kLongestFirst;
  // A worker is leased an action only while the expected peak RAM of what it runs leaves room
  // for the action's (learnt per history key; a worker running nothing takes any action).
  bool memory_aware = true;
  // Finished actions (completed, failed, cancelled; cache answers included) leave memory
  // `finished_in_memory` after they finish, or sooner, oldest first, while more than
  // `max_finished_in_memory` are held (Get and Wait then read them from the store), and
  // the store after `finished_retention`, at most `max_finished` kept, newest first (checked
  // every `prune_interval`). Results stay in the action cache; a build keeps its own view of
  // its actions.
  absl::Duration finished_in_memory = absl::Seconds(30);
  // Bounds memory whatever the rate: a burst of cache answers or fast actions would otherwise
  // hold every record finished in the last `finished_in_memory`.
  size_t max_finished_in_memory = 1'000;
  absl::Duration finished_retention = absl::Hours(24 * 7);
  size_t max_finished = 100'000;
  absl::Duration prune_interval = absl::Minutes(10);
  // What a client's action may name as input: its files, or an image action's two trees, each
  // file counted at every path it appears (libfarm/file_tree/footprint.h). Workers bound what
  // they write too (farm-worker --max-action-disk). The coordinator's own wheel builds and smoke
  // tests are bounded by their uploads instead.
  uint64_t max_action_input_bytes = uint64_t{4} << 30;
};

class Scheduler {
 public:
  using OnlineWorkers = std::function<std::vector<farm::v1::Worker>()>;

  Scheduler(StateStore* store, BlobIndex* blobs, OnlineWorkers online_workers,
            MetricsRegistry* metrics, SchedulerOptions options, std::function<absl::Time()> clock);

  // Rebuilds queues and leases from the store after a (re)start. Running leases get a full
  // TTL to be renewed by their workers.
  absl::Status Load();

  // Adds observers of action transitions and first hands each every action already known,
  // in chunks of 10,000, so they start from the scheduler's state (finished actions are read
  // from the store once for all of them). Call after Load, before serving; the observers must
  // outlive the scheduler's use.
  void AddObservers(const std::vector<ActionObserver*>& observers);
  void AddObserver(ActionObserver* observer) { AddObservers({observer}); }

  // Client side. `history`: where what the actions' runs teach is kept and their costs are
  // looked up (history_scope.h); the coordinator's own actions pass none.
  absl::StatusOr<std::vector<farm::v1::ActionStatus>> Execute(
      const std::vector<farm::v1::Action>& actions, const HistoryScopes& history = {});
  absl::StatusOr<std::vector<farm::v1::ActionStatus>> Wait(const std::vector<std::string>& ids,
                                                           absl::Duration timeout);
  // Wait without blocking (for waits answered later, wait_pool.h): the statuses of `ids` once
  // every one is terminal and persisted, or at once when `final`; nullopt otherwise. Finished
  // actions already out of memory are read from the store once, into `stored` (the caller
  // keeps it between polls of one wait).
  absl::StatusOr<std::optional<std::vector<farm::v1::ActionStatus>>> PollWait(
      const std::vector<std::string>& ids, std::map<std::string, farm::v1::ActionStatus>& stored,
      bool final);
  // Called, with the scheduler's lock held, whenever actions change state (what wakes Wait):
  // it must not call back into the scheduler. Set before serving.
  void SetChangeListener(std::function<void()> listener);
  absl::StatusOr<farm::v1::ActionStatus> Get(const std::string& id);
  absl::StatusOr<farm::v1::ActionStatus> Cancel(const std::string& id);
  // The learnt wall seconds of a run under each history key in the first of `scopes` that has
  // it (ActionHistory), 0 where none.
  std::vector<double> LearntSeconds(const std::vector<std::string>& scopes,
                                    const std::vector<std::string>& history_keys) const;
  // The farm's placement rule, which build plans apply to their shards too.
  const PlacementPolicy& placement() const { return options_.placement; }

  // Worker side. The caller has checked the session.
  absl::StatusOr<std::vector<farm::v1::Lease>> Lease(
      const std::string& worker, const std::string& session,
      const farm::v1::WorkerCapabilities& capabilities, uint32_t free_slots, absl::Duration wait);
  // Returns the leases whose results were refused (revoked or unknown).
  absl::StatusOr<std::vector<std::string>> Complete(
      const std::string& worker, const std::vector<farm::v1::Completion>& completions);
  // Extends the listed leases; returns those this worker must stop.
  std::vector<std::string> Renew(const std::string& worker, const std::string& session,
                                 const std::vector<std::string>& lease_ids);
  // The worker process behind `session` is gone: `died` when it did not leave cleanly.
  void OnSessionEnded(const std::string& worker, const std::string& session, bool died);

  // Requeues actions whose lease expired; lets finished actions go from memory, and from the
  // store past their retention.
  void Sweep();

  struct Counts {
    uint32_t queued = 0, running = 0, completed = 0, failed = 0, cancelled = 0;
  };
  Counts CountsByState() const;
  // Actions held in memory: the live ones and those finished within finished_in_memory (at
  // most max_finished_in_memory of these).
  size_t ActionsInMemory() const;

 private:
  struct Entry {
    farm::v1::ActionRecord record;
    int unsynced = 0;  // writes in flight for this entry
    absl::Time lease_deadline;
    ExpectedCost expected;  // when it was last queued
    // Its place in its build's queue while queued: (-expected seconds or 0, sequence).
    std::pair<double, uint64_t> queue_position;
  };
  // What a worker's leased actions are expected to hold.
  struct WorkerLoad {
    uint32_t running = 0;
    uint64_t reserved_ram = 0;
  };
  using Batch = std::vector<std::string>;  // ids touched by one write

  // Writes `batch` outside the lock, then marks `ids` synced. Must be called with mu_ held;
  // returns with mu_ held. A failed state write ends the process: memory is ahead of disk.
  void Persist(StateBatch& batch, const std::vector<std::string>& ids)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Stage(StateBatch& batch, std::vector<std::string>& ids, Entry& entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What the entry's action is expected to cost, from the history its submitter may read.
  ExpectedCost Expect(const Entry& entry) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // An action's inputs as submitted: its trees stored, parsed and valid, and their footprint
  // within max_action_input_bytes (FAILED_PRECONDITION, INVALID_ARGUMENT, RESOURCE_EXHAUSTED).
  absl::Status CheckInputs(const farm::v1::Action& action) ABSL_LOCKS_EXCLUDED(mu_);

  farm::v1::ActionStatus NewAction(const farm::v1::Action& action, const std::string& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<farm::v1::ActionResult> CachedResult(const std::string& key);
  // Why no online worker can run an action of these requirements; nullopt when one can.
  struct Unplaceable {
    std::string error;                  // for people, with its Fix
    std::vector<std::string> refusals;  // "NAME why-not" per online worker
  };
  std::optional<Unplaceable> WhyUnschedulable(const farm::v1::Requirements& req);
  // Queues `id` (whose `expected` is set) at `order_seconds`: with longest-first, the
  // longest expected action among those submitted with it, so one call's actions (one
  // translation unit's archs) stay together and in their order.
  void Enqueue(const std::string& id, const std::string& build, double order_seconds)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Dequeue(const std::string& id, const std::string& build) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Back to the queue after a lost lease; fails the action past the retry caps.
  void Requeue(Entry& entry, const std::string& reason) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Finish(Entry& entry, farm::v1::ActionState state, const std::string& error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ClearLease(Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<std::string> TakeLeasable(const std::string& worker,
                                        const farm::v1::WorkerCapabilities& capabilities,
                                        uint32_t max) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetLeaseDeadline(Entry& entry, absl::Time deadline) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AwaitSynced(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::optional<std::vector<farm::v1::ActionStatus>>> PollWaitLocked(
      const std::vector<std::string>& ids, std::map<std::string, farm::v1::ActionStatus>& stored,
      bool final) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Wakes Wait and Lease, and tells the change listener.
  void SignalChanged() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Notes that `entry` just finished, so that EvictFinished lets it go in its turn.
  void HoldFinished(const Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops finished, synced actions from memory, oldest first: those older than
  // finished_in_memory, and any beyond max_finished_in_memory.
  void EvictFinished(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Deletes stored finished records past finished_retention or max_finished. Scans the
  // store without the lock.
  void PruneStoredFinished(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);
  // An action's status from memory, else from the store (a finished action); NOT_FOUND.
  absl::StatusOr<farm::v1::ActionStatus> StatusOf(const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CountStored(farm::v1::ActionState state, int delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ActionUpdate Snapshot(const farm::v1::ActionRecord& record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  StateStore* const store_;
  BlobIndex* const blobs_;
  const OnlineWorkers online_workers_;
  MetricsRegistry* const metrics_;
  const SchedulerOptions options_;
  const std::function<absl::Time()> clock_;

  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  // Live actions, and finished ones for finished_in_memory.
  std::map<std::string, Entry> actions_ ABSL_GUARDED_BY(mu_);
  // The finished ones among them by (finished_at, id), oldest first.
  std::set<std::pair<absl::Time, std::string>> finished_in_memory_ ABSL_GUARDED_BY(mu_);
  // Finished records in the store but not in memory, by state.
  Counts stored_finished_ ABSL_GUARDED_BY(mu_);
  absl::Time last_prune_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // Queued action ids per build by queue position; builds are served round-robin.
  std::map<std::string, std::map<std::pair<double, uint64_t>, std::string>> queues_
      ABSL_GUARDED_BY(mu_);
  uint64_t queue_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  ActionHistory history_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, WorkerLoad> load_by_worker_ ABSL_GUARDED_BY(mu_);
  // Running actions by lease deadline, for the sweep.
  std::set<std::pair<absl::Time, std::string>> lease_deadlines_ ABSL_GUARDED_BY(mu_);
  std::string last_served_build_ ABSL_GUARDED_BY(mu_);
  // Queued and running action ids by InflightKey (their key and build).
  std::map<std::string, std::string> inflight_by_key_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> action_by_lease_ ABSL_GUARDED_BY(mu_);
  // Actions whose lease expired while a session held it; charged if that session died.
  std::map<std::string, std::set<std::string>> expired_by_session_ ABSL_GUARDED_BY(mu_);
  std::vector<ActionObserver*> observers_ ABSL_GUARDED_BY(mu_);
  std::function<void()> change_listener_ ABSL_GUARDED_BY(mu_);
  uint64_t update_sequence_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace farm::coordinator
