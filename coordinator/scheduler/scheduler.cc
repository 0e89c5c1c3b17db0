#include "coordinator/scheduler/scheduler.h"

#include <sys/random.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "coordinator/scheduler/action_key.h"
#include "coordinator/scheduler/requirements.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/actions/call_phases.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/footprint.h"
#include "libfarm/file_tree/subtrees.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/time/proto_time.h"

namespace farm::coordinator {
namespace {

using farm::v1::ActionState;

// A worker's phases longer than this are not times (a worker is trusted with nothing).
constexpr double kMaxPhaseSeconds = 7 * 86400;

// The run's phases as the coordinator keeps them (issue 45): the worker's three, dropped
// unless every one is a time, and the queue from the action's own times; each into
// farm_action_phase_seconds{phase}.
void StampPhases(farm::v1::ActionStatus& status, MetricsRegistry& metrics) {
  const farm::v1::CallPhases& sent = status.result().phases();
  farm::v1::CallPhases kept;
  if (CheckPhases(sent, kMaxPhaseSeconds).ok()) {
    kept.set_fetch(sent.fetch());
    kept.set_run(sent.run());
    kept.set_output_upload(sent.output_upload());
  }
  if (status.has_started_at() && status.has_submitted_at()) {
    kept.set_queue(std::max(0.0, absl::ToDoubleSeconds(FromProtoTime(status.started_at()) -
                                                       FromProtoTime(status.submitted_at()))));
  }
  *status.mutable_result()->mutable_phases() = kept;
  for (const auto& [phase, seconds] : {std::pair<const char*, double>{"queue", kept.queue()},
                                       {"fetch", kept.fetch()},
                                       {"run", kept.run()},
                                       {"output_upload", kept.output_upload()}}) {
    metrics
        .GetHistogram("farm_action_phase_seconds",
                      "Where an action run on a worker spent its time: queued, its inputs "
                      "fetched, run, its outputs uploaded.",
                      PhaseHistogramBuckets(), {{"phase", phase}})
        ->Observe(seconds);
  }
}

// Ids sort in creation order: nanoseconds since the epoch, then randomness.
std::string NewId(absl::Time now) {
  uint32_t salt = 0;
  if (getrandom(&salt, sizeof(salt), 0) != sizeof(salt)) salt = static_cast<uint32_t>(rand());
  return absl::StrFormat("%016x%08x", absl::ToUnixNanos(now), salt);
}

std::vector<farm::v1::Digest> InputDigests(const farm::v1::Action& action) {
  std::vector<farm::v1::Digest> out;
  for (const auto& in : action.inputs()) out.push_back(in.digest());
  return out;
}

// The first blob `result` names that the CAS lacks, for a message ("output 2 of 3
// (HASH/SIZE)"); "" when the CAS holds them all.
std::string MissingResultBlob(const farm::v1::ActionResult& result, BlobIndex& blobs) {
  auto describe = [](absl::string_view what, const farm::v1::Digest& d) {
    // The digest is the worker's word: shown only when it is one.
    return absl::StrCat(
        what, " (", ValidateHash(d.hash()).ok() ? DigestToString(d) : "a malformed digest", ")");
  };
  for (int i = 0; i < result.outputs_size(); ++i) {
    const farm::v1::Digest& d = result.outputs(i).digest();
    if (!blobs.Contains(d)) {
      return describe(absl::StrCat("output ", i + 1, " of ", result.outputs_size()), d);
    }
  }
  for (const auto& [what, d] : {std::pair{"stdout", &result.stdout_digest()},
                                std::pair{"stderr", &result.stderr_digest()}}) {
    if (!d->hash().empty() && !blobs.Contains(*d)) return describe(what, *d);
  }
  return "";
}

// Where an in-flight action is found to be joined: by its build and key, so a caller joins
// only its own build's action and never gets another build's action id (which a build token
// may not read); across builds the action cache answers once the first one is done. The key
// has a fixed length, so no two pairs run together.
std::string InflightKey(absl::string_view action_key, absl::string_view build_id) {
  return absl::StrCat(action_key, build_id);
}

}  // namespace

Scheduler::Scheduler(StateStore* store, BlobIndex* blobs, OnlineWorkers online_workers,
                     MetricsRegistry* metrics, SchedulerOptions options,
                     std::function<absl::Time()> clock)
    : store_(store),
      blobs_(blobs),
      online_workers_(std::move(online_workers)),
      metrics_(metrics),
      options_(options),
      clock_(std::move(clock)) {}

absl::Status Scheduler::Load() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_();
  FARM_RETURN_IF_ERROR(history_.Load(*store_));
  // Runs inside ForEach, under the lock taken above (which the analysis cannot follow).
  return store_->ForEachRecord<farm::v1::ActionRecord>(
      Table::kActions, [&](const std::string& key,
                           farm::v1::ActionRecord& record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        Entry entry;
        entry.record = std::move(record);
        if (IsTerminalActionState(entry.record.status().state())) {
          // Finished: read from the store when asked for, never held in memory.
          CountStored(entry.record.status().state(), +1);
          return absl::OkStatus();
        }
        auto [it, inserted] = actions_.emplace(key, std::move(entry));
        Entry& e = it->second;
        const auto& status = e.record.status();
        const std::string build = status.build_id();
        inflight_by_key_[InflightKey(status.action_key(), build)] = key;
        blobs_->Pin(key, InputDigests(e.record.action()));
        if (status.state() == farm::v1::ACTION_STATE_QUEUED) {
          e.expected = Expect(e);
          Enqueue(key, build, e.expected.seconds);
        } else if (status.state() == farm::v1::ACTION_STATE_RUNNING) {
          // Its worker may still be running it: give the lease a full TTL to be renewed.
          SetLeaseDeadline(e, now + std::max(options_.lease_ttl, options_.restart_lease_grace));
          action_by_lease_[e.record.lease_id()] = key;
          e.expected = Expect(e);
          WorkerLoad& load = load_by_worker_[e.record.lease_worker()];
          ++load.running;
          load.reserved_ram += e.expected.peak_ram_bytes;
        }
        return absl::OkStatus();
      });
}

void Scheduler::AddObservers(const std::vector<ActionObserver*>& observers) {
  // What is known goes to the observers in chunks, outside the lock: a store of a million
  // finished records would otherwise be copied whole into memory first (600 MiB at start).
  constexpr size_t kChunk = 10'000;
  std::vector<ActionUpdate> known;
  auto deliver = [&] {
    if (known.empty()) return;
    for (ActionObserver* observer : observers) observer->OnActionsLoaded(known);
    known.clear();
  };
  mu_.Lock();
  observers_.insert(observers_.end(), observers.begin(), observers.end());
  known.reserve(actions_.size());
  for (const auto& [id, e] : actions_) known.push_back(Snapshot(e.record));
  // Finished actions are only in the store; an observer starts from every action known.
  // One scan serves every observer added together. Finished records never change, so the
  // scan may go on while a chunk is delivered; one finished meanwhile may come twice.
  // Runs inside ForEach, under the lock taken above (which the analysis cannot follow).
  absl::Status s = store_->ForEach(
      Table::kActions,
      [&](const std::string& key, const std::string& value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        if (actions_.count(key) > 0) return absl::OkStatus();
        farm::v1::ActionRecord record;
        if (record.ParseFromString(value) && IsTerminalActionState(record.status().state())) {
          known.push_back(Snapshot(record));
        }
        if (known.size() >= kChunk) {
          mu_.Unlock();
          deliver();
          mu_.Lock();
        }
        return absl::OkStatus();
      });
  mu_.Unlock();
  if (!s.ok()) {
    ComponentLogger("coordinator")
        ->error("reading finished actions for an observer: {}", s.ToString());
  }
  // A transition racing this call may be delivered before what was known; its higher
  // sequence tells the observer to keep it.
  deliver();
}

ActionUpdate Scheduler::Snapshot(const farm::v1::ActionRecord& record) {
  return ActionUpdate{.sequence = ++update_sequence_,
                      .status = record.status(),
                      .requirements = record.action().requirements()};
}

void Scheduler::CountStored(ActionState state, int delta) {
  uint32_t* count = state == farm::v1::ACTION_STATE_COMPLETED   ? &stored_finished_.completed
                    : state == farm::v1::ACTION_STATE_FAILED    ? &stored_finished_.failed
                    : state == farm::v1::ACTION_STATE_CANCELLED ? &stored_finished_.cancelled
                                                                : nullptr;
  if (count == nullptr) return;
  if (delta < 0 && *count < static_cast<uint32_t>(-delta)) {
    *count = 0;
  } else {
    *count = static_cast<uint32_t>(static_cast<int64_t>(*count) + delta);
  }
}

absl::StatusOr<farm::v1::ActionStatus> Scheduler::StatusOf(const std::string& id) {
  if (auto it = actions_.find(id); it != actions_.end()) return it->second.record.status();
  farm::v1::ActionRecord record;
  absl::Status s = store_->Get(Table::kActions, id, &record);
  if (absl::IsNotFound(s)) return absl::NotFoundError(absl::StrCat("no action '", id, "'"));
  if (!s.ok()) return s;
  return record.status();
}

void Scheduler::Stage(StateBatch& batch, std::vector<std::string>& ids, Entry& entry) {
  const std::string& id = entry.record.status().action_id();
  batch.Put(Table::kActions, id, entry.record);
  ++entry.unsynced;
  ids.push_back(id);
}

void Scheduler::Persist(StateBatch& batch, const std::vector<std::string>& ids) {
  if (batch.empty()) return;
  std::vector<ActionUpdate> updates;
  const std::vector<ActionObserver*> observers = observers_;
  if (!observers.empty()) {
    updates.reserve(ids.size());
    for (const auto& id : ids) updates.push_back(Snapshot(actions_.at(id).record));
  }
  mu_.Unlock();
  absl::Status s = store_->Write(batch);
  // Observers hear of a transition before any caller is answered or waiter woken, so
  // whoever sees an action's new state through the API also sees it in build progress.
  if (s.ok()) {
    for (ActionObserver* o : observers) o->OnActionsChanged(updates);
  }
  mu_.Lock();
  if (!s.ok()) {
    // Memory already moved ahead of disk; the only safe state is the one on disk.
    ComponentLogger("coordinator")
        ->critical("cannot persist scheduler state, exiting to recover from disk: {}", s.message());
    std::_Exit(1);
  }
  for (const auto& id : ids) {
    auto it = actions_.find(id);
    if (it != actions_.end()) --it->second.unsynced;
  }
  SignalChanged();
}

void Scheduler::SignalChanged() {
  changed_.SignalAll();
  if (change_listener_) change_listener_();
}

void Scheduler::SetChangeListener(std::function<void()> listener) {
  absl::MutexLock lock(&mu_);
  change_listener_ = std::move(listener);
}

void Scheduler::AwaitSynced(const std::string& id) {
  while (true) {
    auto it = actions_.find(id);
    if (it == actions_.end() || it->second.unsynced == 0) return;
    changed_.Wait(&mu_);
  }
}

void Scheduler::Enqueue(const std::string& id, const std::string& build, double order_seconds) {
  Entry& e = actions_.at(id);
  const double order = options_.queue_order == QueueOrder::kLongestFirst ? -order_seconds : 0;
  e.queue_position = {order, queue_sequence_++};
  queues_[build][e.queue_position] = id;
}

void Scheduler::Dequeue(const std::string& id, const std::string& build) {
  auto q = queues_.find(build);
  if (q == queues_.end()) return;
  if (auto e = actions_.find(id); e != actions_.end()) q->second.erase(e->second.queue_position);
  if (q->second.empty()) queues_.erase(q);
}

void Scheduler::SetLeaseDeadline(Entry& e, absl::Time deadline) {
  const std::string& id = e.record.status().action_id();
  lease_deadlines_.erase({e.lease_deadline, id});
  e.lease_deadline = deadline;
  lease_deadlines_.insert({deadline, id});
}

std::optional<farm::v1::ActionResult> Scheduler::CachedResult(const std::string& key) {
  farm::v1::ActionResult result;
  if (!store_->Get(Table::kActionCache, key, &result).ok()) return std::nullopt;
  // A hit is only as good as its blobs: an evicted output means run again.
  if (!MissingResultBlob(result, *blobs_).empty()) return std::nullopt;
  result.set_cache_hit(true);
  return result;
}

std::optional<Scheduler::Unplaceable> Scheduler::WhyUnschedulable(
    const farm::v1::Requirements& req) {
  Unplaceable why;
  for (const auto& w : online_workers_()) {
    absl::Status s = CheckPlacement(req, w.capabilities(), options_.placement);
    if (s.ok()) return std::nullopt;
    why.refusals.push_back(absl::StrCat(w.name(), " ", s.message()));
  }
  why.error = why.refusals.empty()
                  ? "no worker is online. Fix: start a worker, or submit with wait_for_worker to "
                    "queue until one qualifies"
                  : absl::StrCat(
                        "no online worker can run this action: ", absl::StrJoin(why.refusals, "; "),
                        ". Fix: add a worker that qualifies, or submit with "
                        "wait_for_worker");
  return why;
}

farm::v1::ActionStatus Scheduler::NewAction(const farm::v1::Action& action,
                                            const std::string& key) {
  farm::v1::ActionStatus status;
  status.set_action_id(NewId(clock_()));
  status.set_action_key(key);
  status.set_build_id(action.build_id());
  status.set_shard(action.shard());
  *status.mutable_submitted_at() = ToProtoTime(clock_());
  return status;
}

absl::Status Scheduler::CheckInputs(const farm::v1::Action& action) {
  for (const auto& in : action.inputs()) {
    if (!blobs_->Contains(in.digest())) {
      return absl::FailedPreconditionError(
          absl::StrCat("input '", in.path(), "' (", in.digest().hash(), "/",
                       in.digest().size_bytes(), ") is not in the CAS. Fix: upload it first"));
    }
  }
  if (action.has_wheel_build() || action.has_smoke_test()) return absl::OkStatus();
  Footprint footprint = FootprintOf(action);
  // An image action's trees must be here; the files they list are the worker's to fetch (a
  // missing one fails that action, not the farm). What they weigh is checked now, so an action
  // that would fill a worker's disk never reaches one.
  if (!action.working_directory().empty()) {
    for (const farm::v1::Digest* tree : {&action.toolchain().tree(), &action.input_tree()}) {
      // The tree and each of its directories (subtrees.h).
      auto read = [this](const farm::v1::Digest& blob,
                         int64_t max_bytes) -> absl::StatusOr<std::string> {
        absl::StatusOr<std::string> bytes = blobs_->Read(blob, max_bytes);
        if (absl::IsNotFound(bytes.status())) {
          return absl::FailedPreconditionError(
              absl::StrCat("file tree blob ", blob.hash(), "/", blob.size_bytes(),
                           " is not in the CAS. Fix: upload it first"));
        }
        return bytes;
      };
      FARM_ASSIGN_OR_RETURN(const farm::v1::FileTree expanded, ExpandFileTree(*tree, read));
      footprint = footprint + FootprintOf(expanded);
    }
  }
  return CheckFootprint("the action's inputs", footprint, options_.max_action_input_bytes,
                        "farm-coordinator --max-action-input");
}

ExpectedCost Scheduler::Expect(const Entry& entry) const {
  const auto& scopes = entry.record.history_read_scopes();
  return history_.Expect(entry.record.action(), {scopes.begin(), scopes.end()});
}

absl::StatusOr<std::vector<farm::v1::ActionStatus>> Scheduler::Execute(
    const std::vector<farm::v1::Action>& actions, const HistoryScopes& history) {
  for (size_t i = 0; i < actions.size(); ++i) {
    if (absl::Status s = ValidateAction(actions[i]); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("action ", i, ": ", s.message()));
    }
    if (absl::Status s = CheckInputs(actions[i]); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("action ", i, ": ", s.message()));
    }
  }
  // Cache lookups and placement checks read other state; do them before taking the lock.
  std::vector<std::string> keys;
  std::vector<std::optional<farm::v1::ActionResult>> cached;
  std::vector<std::optional<Unplaceable>> unschedulable;
  // A batch (one compile shard, one build) mostly repeats the same requirements.
  std::map<std::string, std::optional<Unplaceable>> placement_by_requirements;
  for (const auto& a : actions) {
    keys.push_back(ActionKey(a));
    cached.push_back(a.skip_cache() ? std::nullopt : CachedResult(keys.back()));
    if (cached.back() || a.wait_for_worker()) {
      unschedulable.emplace_back();
      continue;
    }
    const std::string req = a.requirements().SerializeAsString();
    auto [it, inserted] = placement_by_requirements.try_emplace(req);
    if (inserted) it->second = WhyUnschedulable(a.requirements());
    unschedulable.push_back(it->second);
  }
  Counter* hits = metrics_->GetCounter("farm_action_cache_requests_total",
                                       "Action-cache lookups by outcome.", {{"outcome", "hit"}});
  Counter* misses = metrics_->GetCounter("farm_action_cache_requests_total",
                                         "Action-cache lookups by outcome.", {{"outcome", "miss"}});

  absl::MutexLock lock(&mu_);
  EvictFinished(clock_());
  StateBatch batch;
  std::vector<std::string> touched;
  std::vector<std::string> ids;
  for (size_t i = 0; i < actions.size(); ++i) {
    const farm::v1::Action& action = actions[i];
    if (!cached[i] && !action.skip_cache()) {
      if (auto it = inflight_by_key_.find(InflightKey(keys[i], action.build_id()));
          it != inflight_by_key_.end()) {
        ids.push_back(it->second);  // the same action is already on its way: join it
        continue;
      }
    }
    Entry entry;
    *entry.record.mutable_action() = action;
    *entry.record.mutable_status() = NewAction(action, keys[i]);
    entry.record.set_history_scope(history.write);
    for (const std::string& scope : history.read) entry.record.add_history_read_scopes(scope);
    auto& status = *entry.record.mutable_status();
    const std::string id = status.action_id();
    if (cached[i]) {
      hits->Increment();
      status.set_state(farm::v1::ACTION_STATE_COMPLETED);
      *status.mutable_result() = *cached[i];
      *status.mutable_finished_at() = status.submitted_at();
    } else if (unschedulable[i]) {
      misses->Increment();
      status.set_state(farm::v1::ACTION_STATE_FAILED);
      status.set_error(unschedulable[i]->error);
      status.set_unplaceable(true);
      for (const std::string& refusal : unschedulable[i]->refusals) {
        status.add_placement_refusals(refusal);
      }
      *status.mutable_finished_at() = status.submitted_at();
    } else {
      if (!action.skip_cache()) misses->Increment();
      status.set_state(farm::v1::ACTION_STATE_QUEUED);
      inflight_by_key_[InflightKey(keys[i], action.build_id())] = id;
      blobs_->Pin(id, InputDigests(action));
    }
    auto [it, inserted] = actions_.emplace(id, std::move(entry));
    if (IsTerminalActionState(it->second.record.status().state())) HoldFinished(it->second);
    Stage(batch, touched, it->second);
    ids.push_back(id);
  }
  Persist(batch, touched);
  // Queued only now that they are durable, so no worker runs an action the store forgot;
  // those of one build submitted together share the rank of the longest.
  std::map<std::string, double> longest_by_build;
  std::vector<std::string> to_queue;
  for (const auto& id : ids) {
    AwaitSynced(id);
    auto it = actions_.find(id);
    if (it == actions_.end() ||
        it->second.record.status().state() != farm::v1::ACTION_STATE_QUEUED ||
        std::find(touched.begin(), touched.end(), id) == touched.end()) {
      continue;
    }
    Entry& e = it->second;
    e.expected = Expect(e);
    double& longest = longest_by_build[e.record.status().build_id()];
    longest = std::max(longest, e.expected.seconds);
    to_queue.push_back(id);
  }
  for (const auto& id : to_queue) {
    // Cancelled while a later one was awaited (the lock was released)?
    auto it = actions_.find(id);
    if (it == actions_.end() ||
        it->second.record.status().state() != farm::v1::ACTION_STATE_QUEUED) {
      continue;
    }
    const std::string& build = it->second.record.status().build_id();
    Enqueue(id, build, longest_by_build[build]);
  }
  std::vector<farm::v1::ActionStatus> out;
  for (const auto& id : ids) {
    AwaitSynced(id);
    auto it = actions_.find(id);
    if (it == actions_.end()) {  // a joined action that finished and left memory meanwhile
      auto status = StatusOf(id);
      if (!status.ok()) return status.status();
      out.push_back(*std::move(status));
      continue;
    }
    out.push_back(it->second.record.status());
  }
  SignalChanged();
  return out;
}

std::vector<double> Scheduler::LearntSeconds(const std::vector<std::string>& scopes,
                                             const std::vector<std::string>& history_keys) const {
  absl::MutexLock lock(&mu_);
  std::vector<double> seconds;
  for (const std::string& key : history_keys) {
    seconds.push_back(history_.LearntSeconds(scopes, key));
  }
  return seconds;
}

absl::StatusOr<farm::v1::ActionStatus> Scheduler::Get(const std::string& id) {
  absl::MutexLock lock(&mu_);
  AwaitSynced(id);
  return StatusOf(id);
}

absl::StatusOr<std::vector<farm::v1::ActionStatus>> Scheduler::Wait(
    const std::vector<std::string>& ids, absl::Duration timeout) {
  const absl::Time deadline = clock_() + timeout;
  absl::MutexLock lock(&mu_);
  std::map<std::string, farm::v1::ActionStatus> stored;
  while (true) {
    const absl::Time now = clock_();
    FARM_ASSIGN_OR_RETURN(auto statuses, PollWaitLocked(ids, stored, now >= deadline));
    if (statuses.has_value()) return *std::move(statuses);
    changed_.WaitWithTimeout(&mu_, deadline - now);
  }
}

absl::StatusOr<std::optional<std::vector<farm::v1::ActionStatus>>> Scheduler::PollWait(
    const std::vector<std::string>& ids, std::map<std::string, farm::v1::ActionStatus>& stored,
    bool final) {
  absl::MutexLock lock(&mu_);
  return PollWaitLocked(ids, stored, final);
}

absl::StatusOr<std::optional<std::vector<farm::v1::ActionStatus>>> Scheduler::PollWaitLocked(
    const std::vector<std::string>& ids, std::map<std::string, farm::v1::ActionStatus>& stored,
    bool final) {
  bool done = true;
  for (const auto& id : ids) {
    auto it = actions_.find(id);
    if (it == actions_.end()) {
      if (stored.count(id) > 0) continue;
      auto status = StatusOf(id);
      if (!status.ok()) return status.status();
      stored[id] = *std::move(status);
      continue;
    }
    if (it->second.unsynced > 0 || !IsTerminalActionState(it->second.record.status().state())) {
      done = false;
    }
  }
  if (!done && !final) return std::nullopt;
  std::vector<farm::v1::ActionStatus> out;
  for (const auto& id : ids) {
    auto it = actions_.find(id);
    out.push_back(it != actions_.end() ? it->second.record.status() : stored.at(id));
  }
  return out;
}

absl::StatusOr<farm::v1::ActionStatus> Scheduler::Cancel(const std::string& id) {
  absl::MutexLock lock(&mu_);
  AwaitSynced(id);
  auto it = actions_.find(id);
  if (it == actions_.end()) return StatusOf(id);  // finished (or unknown)
  Entry& e = it->second;
  if (IsTerminalActionState(e.record.status().state())) return e.record.status();
  if (e.record.status().state() == farm::v1::ACTION_STATE_QUEUED) {
    Dequeue(id, e.record.status().build_id());
  }
  Finish(e, farm::v1::ACTION_STATE_CANCELLED, "cancelled by request");
  StateBatch batch;
  std::vector<std::string> touched;
  Stage(batch, touched, e);
  Persist(batch, touched);
  return actions_.at(id).record.status();
}

void Scheduler::ClearLease(Entry& e) {
  if (!e.record.lease_id().empty()) {
    lease_deadlines_.erase({e.lease_deadline, e.record.status().action_id()});
    if (auto load = load_by_worker_.find(e.record.lease_worker()); load != load_by_worker_.end()) {
      load->second.reserved_ram -= std::min(load->second.reserved_ram, e.expected.peak_ram_bytes);
      if (--load->second.running == 0) load_by_worker_.erase(load);
    }
  }
  action_by_lease_.erase(e.record.lease_id());
  e.record.clear_lease_id();
  e.record.clear_lease_worker();
  e.record.clear_lease_session();
}

void Scheduler::Finish(Entry& e, ActionState state, const std::string& error) {
  auto& status = *e.record.mutable_status();
  status.set_state(state);
  if (!error.empty()) status.set_error(error);
  *status.mutable_finished_at() = ToProtoTime(clock_());
  ClearLease(e);
  auto key = inflight_by_key_.find(InflightKey(status.action_key(), status.build_id()));
  if (key != inflight_by_key_.end() && key->second == status.action_id()) {
    inflight_by_key_.erase(key);
  }
  blobs_->Unpin(status.action_id());
  HoldFinished(e);
  metrics_
      ->GetCounter("farm_actions_finished_total", "Actions that reached a final state.",
                   {{"state", state == farm::v1::ACTION_STATE_COMPLETED ? "completed"
                              : state == farm::v1::ACTION_STATE_FAILED  ? "failed"
                                                                        : "cancelled"}})
      ->Increment();
}

void Scheduler::Requeue(Entry& e, const std::string& reason) {
  auto& status = *e.record.mutable_status();
  ClearLease(e);
  if (status.worker_deaths() >= options_.max_worker_deaths) {
    Finish(e, farm::v1::ACTION_STATE_FAILED,
           absl::StrCat("gave up: ", status.worker_deaths(),
                        " workers died while running this action (last: ", status.worker(),
                        "). It may need more memory than they have; run it locally to see"));
    return;
  }
  if (status.attempts() >= options_.max_attempts) {
    Finish(e, farm::v1::ACTION_STATE_FAILED,
           absl::StrCat("gave up after ", status.attempts(), " attempts; last: ", reason));
    return;
  }
  ComponentLogger("coordinator")->info("action {} requeued: {}", status.action_id(), reason);
  status.set_state(farm::v1::ACTION_STATE_QUEUED);
  status.set_error(reason);
  e.expected = Expect(e);
  Enqueue(status.action_id(), status.build_id(), e.expected.seconds);
}

std::vector<std::string> Scheduler::TakeLeasable(const std::string& worker,
                                                 const farm::v1::WorkerCapabilities& caps,
                                                 uint32_t max) {
  std::vector<std::string> picked;
  WorkerLoad load;
  if (auto it = load_by_worker_.find(worker); it != load_by_worker_.end()) load = it->second;
  // Whether the worker has RAM for `e` beside what it runs and what this call gave it.
  auto fits = [&](const Entry& e) {
    const uint64_t need = e.expected.peak_ram_bytes;
    return !options_.memory_aware || need == 0 || caps.ram_bytes() == 0 || load.running == 0 ||
           load.reserved_ram + need <= caps.ram_bytes();
  };
  // Round-robin across builds, in queue order within a build (--queue-order), so one large
  // build cannot starve another.
  bool progress = true;
  while (picked.size() < max && progress && !queues_.empty()) {
    progress = false;
    auto start = queues_.upper_bound(last_served_build_);
    std::vector<std::string> order;
    for (auto it = start; it != queues_.end(); ++it) order.push_back(it->first);
    for (auto it = queues_.begin(); it != start; ++it) order.push_back(it->first);
    for (const auto& build : order) {
      if (picked.size() >= max) break;
      auto& q = queues_[build];
      for (auto it = q.begin(); it != q.end(); ++it) {
        Entry& e = actions_.at(it->second);
        if (e.unsynced > 0 || !fits(e) ||
            !CheckPlacement(e.record.action().requirements(), caps, options_.placement).ok()) {
          continue;
        }
        picked.push_back(it->second);
        ++load.running;
        load.reserved_ram += e.expected.peak_ram_bytes;
        q.erase(it);
        progress = true;
        last_served_build_ = build;
        break;
      }
      if (q.empty()) queues_.erase(build);
    }
  }
  return picked;
}

absl::StatusOr<std::vector<farm::v1::Lease>> Scheduler::Lease(
    const std::string& worker, const std::string& session,
    const farm::v1::WorkerCapabilities& capabilities, uint32_t free_slots, absl::Duration wait) {
  const absl::Time deadline = clock_() + wait;
  absl::MutexLock lock(&mu_);
  std::vector<std::string> picked;
  while (free_slots > 0) {
    picked = TakeLeasable(worker, capabilities, free_slots);
    const absl::Time now = clock_();
    if (!picked.empty() || now >= deadline) break;
    changed_.WaitWithTimeout(&mu_, deadline - now);
  }
  StateBatch batch;
  std::vector<std::string> touched;
  std::vector<farm::v1::Lease> leases;
  const absl::Time now = clock_();
  for (const auto& id : picked) {
    Entry& e = actions_.at(id);
    auto& status = *e.record.mutable_status();
    status.set_state(farm::v1::ACTION_STATE_RUNNING);
    status.set_attempts(status.attempts() + 1);
    status.set_worker(worker);
    status.set_worker_cpu_arch(capabilities.cpu_arch());
    *status.mutable_started_at() = ToProtoTime(now);
    e.record.set_lease_id(NewId(now));
    e.record.set_lease_worker(worker);
    e.record.set_lease_session(session);
    SetLeaseDeadline(e, now + options_.lease_ttl);
    action_by_lease_[e.record.lease_id()] = id;
    WorkerLoad& load = load_by_worker_[worker];
    ++load.running;
    load.reserved_ram += e.expected.peak_ram_bytes;
    Stage(batch, touched, e);
    farm::v1::Lease lease;
    lease.set_lease_id(e.record.lease_id());
    lease.set_action_id(id);
    *lease.mutable_action() = e.record.action();
    if (lease.action().timeout_seconds() == 0) {
      lease.mutable_action()->set_timeout_seconds(
          static_cast<uint32_t>(absl::ToInt64Seconds(options_.default_timeout)));
    }
    lease.set_ttl_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(options_.lease_ttl)));
    leases.push_back(std::move(lease));
  }
  Persist(batch, touched);
  return leases;
}

absl::StatusOr<std::vector<std::string>> Scheduler::Complete(
    const std::string& worker, const std::vector<farm::v1::Completion>& completions) {
  // A result is the worker's word: every blob it names must be in the CAS before the action
  // counts as done and the result enters the action cache, or clients would be handed
  // outputs nobody can download (or that someone uploads later).
  std::vector<std::string> missing;
  missing.reserve(completions.size());
  for (const auto& c : completions) {
    missing.push_back(c.infra_error().empty() ? MissingResultBlob(c.result(), *blobs_) : "");
  }
  absl::MutexLock lock(&mu_);
  EvictFinished(clock_());
  StateBatch batch;
  std::vector<std::string> touched;
  std::vector<std::string> rejected;
  Histogram* durations =
      metrics_->GetHistogram("farm_action_duration_seconds", "Wall time of actions run on workers.",
                             {0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 7200});
  for (size_t i = 0; i < completions.size(); ++i) {
    const farm::v1::Completion& c = completions[i];
    auto lease = action_by_lease_.find(c.lease_id());
    if (lease == action_by_lease_.end()) {
      rejected.push_back(c.lease_id());
      continue;
    }
    Entry& e = actions_.at(lease->second);
    if (e.unsynced > 0 || e.record.lease_worker() != worker ||
        e.record.status().state() != farm::v1::ACTION_STATE_RUNNING) {
      rejected.push_back(c.lease_id());
      continue;
    }
    auto& status = *e.record.mutable_status();
    if (!c.infra_error().empty()) {
      Requeue(e, absl::StrCat("worker ", worker, " could not run it: ", c.infra_error()));
    } else if (!missing[i].empty()) {
      const std::string reason = absl::StrCat("worker ", worker, " reported ", missing[i],
                                              ", which is not in the CAS (never uploaded)");
      ComponentLogger("coordinator")
          ->warn("action {}: result refused: {}; the attempt counts as failed and is retried",
                 e.record.status().action_id(), reason);
      Requeue(e, reason);
    } else {
      *status.mutable_result() = c.result();
      status.mutable_result()->set_worker(worker);
      StampPhases(status, *metrics_);
      status.clear_error();
      Finish(e, farm::v1::ACTION_STATE_COMPLETED, "");
      durations->Observe(c.result().wall_seconds());
      history_.Learn(e.record.action(), e.record.history_scope(), c.result(), batch);
      // Only clean runs are cached: a failure might come from the worker, not the input.
      if (c.result().exit_code() == 0 && !e.record.action().skip_cache()) {
        batch.Put(Table::kActionCache, status.action_key(), status.result());
      }
    }
    Stage(batch, touched, e);
  }
  Persist(batch, touched);
  return rejected;
}

std::vector<std::string> Scheduler::Renew(const std::string& worker, const std::string& session,
                                          const std::vector<std::string>& lease_ids) {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> revoked;
  const absl::Time deadline = clock_() + options_.lease_ttl;
  for (const auto& lease_id : lease_ids) {
    auto it = action_by_lease_.find(lease_id);
    if (it == action_by_lease_.end()) {
      revoked.push_back(lease_id);
      continue;
    }
    Entry& e = actions_.at(it->second);
    if (e.record.lease_worker() != worker || e.record.lease_session() != session) {
      revoked.push_back(lease_id);
      continue;
    }
    SetLeaseDeadline(e, deadline);
  }
  return revoked;
}

void Scheduler::OnSessionEnded(const std::string& worker, const std::string& session, bool died) {
  absl::MutexLock lock(&mu_);
  StateBatch batch;
  std::vector<std::string> touched;
  for (auto& [id, e] : actions_) {
    if (e.unsynced > 0 || e.record.status().state() != farm::v1::ACTION_STATE_RUNNING ||
        e.record.lease_session() != session) {
      continue;
    }
    if (died) e.record.mutable_status()->set_worker_deaths(e.record.status().worker_deaths() + 1);
    Requeue(e, absl::StrCat("worker ", worker, died ? " died" : " left", " while running it"));
    Stage(batch, touched, e);
  }
  if (auto expired = expired_by_session_.find(session); expired != expired_by_session_.end()) {
    for (const auto& id : expired->second) {
      auto it = actions_.find(id);
      if (!died || it == actions_.end() || it->second.unsynced > 0) continue;
      Entry& e = it->second;
      if (IsTerminalActionState(e.record.status().state())) continue;
      auto& status = *e.record.mutable_status();
      status.set_worker_deaths(status.worker_deaths() + 1);
      if (status.worker_deaths() >= options_.max_worker_deaths &&
          status.state() == farm::v1::ACTION_STATE_QUEUED) {
        Dequeue(id, status.build_id());
        Requeue(e, "worker died");
      }
      Stage(batch, touched, e);
    }
    expired_by_session_.erase(expired);
  }
  Persist(batch, touched);
}

void Scheduler::Sweep() {
  bool prune = false;
  const absl::Time now = clock_();
  {
    absl::MutexLock lock(&mu_);
    StateBatch batch;
    std::vector<std::string> touched;
    std::vector<std::string> lapsed;
    for (auto it = lease_deadlines_.begin(); it != lease_deadlines_.end() && it->first <= now;
         ++it) {
      lapsed.push_back(it->second);
    }
    for (const std::string& id : lapsed) {
      auto it = actions_.find(id);
      if (it == actions_.end()) continue;
      Entry& e = it->second;
      if (e.unsynced > 0 || e.record.status().state() != farm::v1::ACTION_STATE_RUNNING) continue;
      // A lapsed lease alone costs no retry: the worker may just have lost its network.
      // If its process turns out to have died, OnSessionEnded charges the action then.
      expired_by_session_[e.record.lease_session()].insert(id);
      Requeue(e, absl::StrCat("lease on ", e.record.lease_worker(), " expired"));
      Stage(batch, touched, e);
    }
    Persist(batch, touched);
    EvictFinished(now);
    if (now - last_prune_ >= options_.prune_interval) {
      last_prune_ = now;
      prune = true;
    }
  }
  if (prune) PruneStoredFinished(now);
}

void Scheduler::HoldFinished(const Entry& entry) {
  const farm::v1::ActionStatus& status = entry.record.status();
  finished_in_memory_.insert({FromProtoTime(status.finished_at()), status.action_id()});
}

void Scheduler::EvictFinished(absl::Time now) {
  while (!finished_in_memory_.empty()) {
    const auto oldest = finished_in_memory_.begin();
    if (finished_in_memory_.size() <= options_.max_finished_in_memory &&
        now - oldest->first < options_.finished_in_memory) {
      return;
    }
    if (auto it = actions_.find(oldest->second); it != actions_.end()) {
      if (it->second.unsynced > 0) return;  // still being written: a later call takes it
      CountStored(it->second.record.status().state(), +1);
      actions_.erase(it);
    }
    finished_in_memory_.erase(oldest);
  }
}

void Scheduler::PruneStoredFinished(absl::Time now) {
  // The scans run without the lock: finished records never change, and whatever finishes
  // meanwhile is younger than anything this pass could delete. Memory follows what is
  // deleted, not what is kept: the first scan only counts the records kept.
  struct Finished {
    absl::Time at;
    std::string id;
    ActionState state;
    std::string build_id;
  };
  auto older = [](const Finished& a, const Finished& b) { return a.at < b.at; };
  // Visits each stored finished record with its finish time.
  auto scan = [&](const std::function<void(const std::string&, const farm::v1::ActionRecord&,
                                           absl::Time)>& visit) {
    return store_->ForEach(Table::kActions, [&](const std::string& key, const std::string& value) {
      farm::v1::ActionRecord record;
      if (record.ParseFromString(value) && IsTerminalActionState(record.status().state())) {
        visit(key, record, FromProtoTime(record.status().finished_at()));
      }
      return absl::OkStatus();
    });
  };
  auto finished = [](const std::string& key, const farm::v1::ActionRecord& record, absl::Time at) {
    return Finished{at, key, record.status().state(), record.status().build_id()};
  };
  std::vector<Finished> past;
  size_t kept = 0;
  absl::Status scanned =
      scan([&](const std::string& key, const farm::v1::ActionRecord& record, absl::Time at) {
        if (now - at > options_.finished_retention) {
          past.push_back(finished(key, record, at));
        } else {
          ++kept;
        }
      });
  // Over the cap: a second scan finds the oldest `excess` of those kept, holding no more.
  if (scanned.ok() && kept > options_.max_finished) {
    const size_t excess = kept - options_.max_finished;
    std::vector<Finished> oldest;  // a heap, the newest of them on top
    scanned =
        scan([&](const std::string& key, const farm::v1::ActionRecord& record, absl::Time at) {
          if (now - at > options_.finished_retention) return;
          if (oldest.size() == excess && !(at < oldest.front().at)) return;
          oldest.push_back(finished(key, record, at));
          std::push_heap(oldest.begin(), oldest.end(), older);
          if (oldest.size() > excess) {
            std::pop_heap(oldest.begin(), oldest.end(), older);
            oldest.pop_back();
          }
        });
    kept -= oldest.size();
    std::move(oldest.begin(), oldest.end(), std::back_inserter(past));
  }
  auto log = ComponentLogger("coordinator");
  if (!scanned.ok()) {
    log->error("pruning finished actions: cannot read the store: {}", scanned.ToString());
    return;
  }
  if (past.empty()) return;
  std::vector<DeletedAction> deleted;
  std::vector<ActionObserver*> observers;
  {
    absl::MutexLock lock(&mu_);
    StateBatch batch;
    for (const Finished& f : past) {
      auto it = actions_.find(f.id);
      if (it != actions_.end()) {
        if (it->second.unsynced > 0) continue;  // being written: next pass
        finished_in_memory_.erase({FromProtoTime(it->second.record.status().finished_at()), f.id});
        actions_.erase(it);
      } else {
        CountStored(f.state, -1);
      }
      batch.Delete(Table::kActions, f.id);
      deleted.push_back({f.id, f.build_id});
    }
    if (absl::Status s = store_->Write(batch); !s.ok()) {
      log->error("pruning finished actions: {}", s.ToString());
      return;
    }
    observers = observers_;
  }
  log->info("deleted {} finished action record(s) past their retention ({} kept)", deleted.size(),
            kept);
  for (ActionObserver* o : observers) o->OnActionsDeleted(deleted);
}

Scheduler::Counts Scheduler::CountsByState() const {
  absl::MutexLock lock(&mu_);
  Counts c = stored_finished_;
  for (const auto& [id, e] : actions_) {
    switch (e.record.status().state()) {
      case farm::v1::ACTION_STATE_QUEUED:
        ++c.queued;
        break;
      case farm::v1::ACTION_STATE_RUNNING:
        ++c.running;
        break;
      case farm::v1::ACTION_STATE_COMPLETED:
        ++c.completed;
        break;
      case farm::v1::ACTION_STATE_FAILED:
        ++c.failed;
        break;
      case farm::v1::ACTION_STATE_CANCELLED:
        ++c.cancelled;
        break;
      default:
        break;
    }
  }
  return c;
}

size_t Scheduler::ActionsInMemory() const {
  absl::MutexLock lock(&mu_);
  return actions_.size();
}

}  // namespace farm::coordinator
