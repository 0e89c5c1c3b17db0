#include "coordinator/workers/worker_registry.h"

#include "absl/strings/str_cat.h"
#include "farm/v1/state.pb.h"
#include "libfarm/auth/token.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/time/proto_time.h"
#include "libfarm/workers/worker_state.h"

namespace farm::coordinator {
namespace {

using farm::v1::WorkerState;

// A session id is a worker's proof of its registration beside its token: unguessable.
constexpr size_t kSessionIdBytes = 16;

// PERMISSION_DENIED: `name` is bound to token `bound_to`, and a call with another token
// registers it or acts for it.
absl::Status BoundToAnotherToken(const std::string& name, const std::string& bound_to) {
  const bool farm_token = bound_to == "farm";
  return absl::PermissionDeniedError(absl::StrCat(
      "worker name '", name, "' is bound to ",
      farm_token ? "the coordinator's token file" : absl::StrCat("token ", bound_to),
      ", which registered it first; this call carries another token. Fix: start this worker "
      "with that token, or another --name",
      farm_token ? ""
                 : absl::StrCat("; or an admin revokes token ", bound_to,
                                " (farmctl token revoke) to free the name")));
}

}  // namespace

WorkerRegistry::WorkerRegistry(StateStore* store, absl::Duration timeout, Clock clock)
    : store_(store), timeout_(timeout), clock_(std::move(clock)) {}

absl::Status WorkerRegistry::Load() {
  absl::MutexLock lock(&mu_);
  workers_.clear();
  const absl::Time now = clock_();
  // Runs inside ForEach, under the lock taken above (which the analysis cannot follow).
  return store_->ForEachRecord<farm::v1::Worker>(
      Table::kWorkers,
      [&](const std::string& key, farm::v1::Worker& record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        Entry entry;
        // The value is a Worker followed by its WorkerSession, which the record kept as an
        // unknown field: read from there, then dropped so that a listing never sends it.
        farm::v1::WorkerSession session;
        if (!session.ParseFromString(record.SerializeAsString())) {
          return store_->Quarantine(Table::kWorkers, key, "its session does not parse").status();
        }
        record.DiscardUnknownFields();
        entry.record = std::move(record);
        entry.session_id = session.session_id();
        entry.last_heard = now;
        workers_.emplace(key, std::move(entry));
        return absl::OkStatus();
      });
}

void WorkerRegistry::SetTokenIsValid(std::function<bool(const std::string&)> is_valid) {
  token_is_valid_ = std::move(is_valid);
}

absl::Status WorkerRegistry::Store(const farm::v1::Worker& record, const std::string& session_id) {
  farm::v1::WorkerSession session;
  session.set_session_id(session_id);
  farm::v1::Worker stored = record;
  // Held as an unknown field, which the record's serialization writes after its own fields.
  if (!stored.MergeFromString(session.SerializeAsString())) {
    return absl::InternalError(
        absl::StrCat("cannot encode the session of worker '", record.name(), "'"));
  }
  return store_->Put(Table::kWorkers, record.name(), stored);
}

absl::StatusOr<std::string> WorkerRegistry::Register(
    const std::string& name, const farm::v1::WorkerCapabilities& capabilities,
    const std::string& peer, const std::string& instance_id, const std::string& registered_by) {
  FARM_ASSIGN_OR_RETURN(const std::string session_id, RandomHex(kSessionIdBytes));
  std::string ended_session;
  bool ended_by_death = false;
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_();
  auto it = workers_.find(name);
  farm::v1::Worker record = it != workers_.end() ? it->second.record : farm::v1::Worker();
  const bool alive = it != workers_.end() &&
                     (record.state() == farm::v1::WORKER_STATE_ONLINE ||
                      record.state() == farm::v1::WORKER_STATE_DRAINING) &&
                     now - it->second.last_heard < timeout_;
  const std::string& bound_to = record.registered_by();
  if (!bound_to.empty() && bound_to != registered_by &&
      (!token_is_valid_ || token_is_valid_(bound_to))) {
    return BoundToAnotherToken(name, bound_to);
  }
  if (alive && record.instance_id() != instance_id) {
    return absl::AlreadyExistsError(absl::StrCat(
        "worker name '", name, "' is taken by a live worker registered from ", record.peer(),
        " (heard from ",
        absl::FormatDuration(absl::Trunc(now - it->second.last_heard, absl::Milliseconds(100))),
        " ago). Fix: stop that worker, or start this one with another --name; a worker's own "
        "restart (same --work-dir) is always let back in"));
  }
  if (alive) {
    ComponentLogger("coordinator")
        ->info(
            "worker '{}' registered again from {} (same instance); its previous session from "
            "{} ends",
            name, peer, record.peer());
  }
  if (it != workers_.end()) {
    ended_session = it->second.session_id;
    ended_by_death = record.state() != farm::v1::WORKER_STATE_OFFLINE;
  }
  record.set_name(name);
  *record.mutable_capabilities() = capabilities;
  record.set_peer(peer);
  record.set_instance_id(instance_id);
  record.set_registered_by(registered_by);
  record.set_slots_in_use(0);
  *record.mutable_last_seen() = ToProtoTime(now);
  if (it == workers_.end()) *record.mutable_registered_at() = ToProtoTime(now);
  if (record.state() != farm::v1::WORKER_STATE_ONLINE) {
    record.set_state(farm::v1::WORKER_STATE_ONLINE);
    *record.mutable_state_since() = ToProtoTime(now);
  }
  FARM_RETURN_IF_ERROR(Store(record, session_id));
  workers_[name] = Entry{record, session_id, now, true};
  if (!ended_session.empty() && session_ended_) {
    // The old process never said goodbye: whatever it was running died with it.
    mu_.Unlock();
    session_ended_(name, ended_session, ended_by_death);
    mu_.Lock();
  }
  return session_id;
}

absl::StatusOr<WorkerRegistry::Entry*> WorkerRegistry::FindSession(const WorkerCaller& caller) {
  auto it = workers_.find(caller.name);
  if (it == workers_.end()) {
    return absl::NotFoundError(absl::StrCat("worker '", caller.name, "' is not registered"));
  }
  // The token first, so that another token learns nothing about the session it names.
  const std::string& bound_to = it->second.record.registered_by();
  if (bound_to.empty()) {
    // Registered before names were bound to tokens: registering again binds it.
    return absl::FailedPreconditionError(absl::StrCat(
        "worker '", caller.name, "' registered before names were bound to tokens; register again"));
  }
  if (bound_to != caller.token_id) return BoundToAnotherToken(caller.name, bound_to);
  if (!TokensEqual(it->second.session_id, caller.session_id)) {
    return absl::FailedPreconditionError(
        absl::StrCat("session of worker '", caller.name, "' was replaced; register again"));
  }
  return &it->second;
}

absl::Status WorkerRegistry::SetState(Entry& entry, WorkerState state) {
  if (entry.record.state() == state) return absl::OkStatus();
  farm::v1::Worker updated = entry.record;
  updated.set_state(state);
  *updated.mutable_state_since() = ToProtoTime(clock_());
  *updated.mutable_last_seen() = LastSeen(entry);
  FARM_RETURN_IF_ERROR(Store(updated, entry.session_id));
  ComponentLogger("coordinator")
      ->info("worker '{}' {} -> {}", updated.name(), WorkerStateName(entry.record.state()),
             WorkerStateName(state));
  entry.record = std::move(updated);
  return absl::OkStatus();
}

absl::Status WorkerRegistry::Heartbeat(const WorkerCaller& caller, bool draining,
                                       uint32_t slots_in_use) {
  absl::MutexLock lock(&mu_);
  auto entry = FindSession(caller);
  if (!entry.ok()) return entry.status();
  (*entry)->last_heard = clock_();
  (*entry)->heard_since_load = true;
  (*entry)->record.set_slots_in_use(slots_in_use);
  return SetState(**entry,
                  draining ? farm::v1::WORKER_STATE_DRAINING : farm::v1::WORKER_STATE_ONLINE);
}

absl::Status WorkerRegistry::Leave(const WorkerCaller& caller) {
  {
    absl::MutexLock lock(&mu_);
    auto entry = FindSession(caller);
    if (!entry.ok()) return entry.status();
    (*entry)->last_heard = clock_();
    (*entry)->heard_since_load = true;
    (*entry)->record.set_slots_in_use(0);
    FARM_RETURN_IF_ERROR(SetState(**entry, farm::v1::WORKER_STATE_OFFLINE));
  }
  if (session_ended_) session_ended_(caller.name, caller.session_id, /*died=*/false);
  return absl::OkStatus();
}

absl::StatusOr<farm::v1::WorkerCapabilities> WorkerRegistry::SessionCapabilities(
    const WorkerCaller& caller) {
  absl::MutexLock lock(&mu_);
  auto entry = FindSession(caller);
  if (!entry.ok()) return entry.status();
  return (*entry)->record.capabilities();
}

void WorkerRegistry::SetSessionEndedHandler(SessionEnded handler) {
  session_ended_ = std::move(handler);
}

absl::Status WorkerRegistry::Sweep() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_();
  for (auto& [name, entry] : workers_) {
    const auto state = entry.record.state();
    if ((state == farm::v1::WORKER_STATE_ONLINE || state == farm::v1::WORKER_STATE_DRAINING) &&
        now - entry.last_heard > timeout_) {
      absl::Status s = SetState(entry, farm::v1::WORKER_STATE_LOST);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

google::protobuf::Timestamp WorkerRegistry::LastSeen(const Entry& entry) {
  return entry.heard_since_load ? ToProtoTime(entry.last_heard) : entry.record.last_seen();
}

std::vector<farm::v1::Worker> WorkerRegistry::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<farm::v1::Worker> out;
  out.reserve(workers_.size());
  for (const auto& [name, entry] : workers_) {
    out.push_back(entry.record);
    *out.back().mutable_last_seen() = LastSeen(entry);
  }
  return out;
}

std::vector<farm::v1::Worker> WorkerRegistry::ListOnline() const {
  std::vector<farm::v1::Worker> all = List();
  std::erase_if(
      all, [](const farm::v1::Worker& w) { return w.state() != farm::v1::WORKER_STATE_ONLINE; });
  return all;
}

WorkerCounts WorkerRegistry::Counts() const {
  absl::MutexLock lock(&mu_);
  WorkerCounts c;
  for (const auto& [name, entry] : workers_) {
    switch (entry.record.state()) {
      case farm::v1::WORKER_STATE_ONLINE:
        ++c.online;
        c.slots_online += entry.record.capabilities().slots();
        break;
      case farm::v1::WORKER_STATE_DRAINING:
        ++c.draining;
        break;
      case farm::v1::WORKER_STATE_LOST:
        ++c.lost;
        break;
      case farm::v1::WORKER_STATE_OFFLINE:
        ++c.offline;
        break;
      default:
        break;
    }
  }
  return c;
}

}  // namespace farm::coordinator
