#include "coordinator/builds/build_registry.h"

#include <sys/random.h>

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "coordinator/builds/build_log_blocks.h"
#include "coordinator/builds/call_times.h"
#include "farm/v1/state.pb.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/text/utf8.h"
#include "libfarm/text/utf8_fields.h"
#include "libfarm/time/proto_time.h"

namespace farm::coordinator {
namespace {

using farm::v1::Build;
using farm::v1::BuildState;

constexpr uint64_t kMaxAppendBytes = uint64_t{4} << 20;
const std::vector<double> kDurationBuckets = {1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200};

bool IsSet(const google::protobuf::Timestamp& ts) { return ts.seconds() != 0 || ts.nanos() != 0; }

absl::Status CheckBuildId(const std::string& id) {
  const bool ok = !id.empty() && id.size() <= 128 && std::all_of(id.begin(), id.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
           c == '+';
  });
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("build id '", id, "' is not valid. Fix: use 1 to 128 of [A-Za-z0-9._+-]"));
}

std::string RandomSuffix() {
  uint32_t r = 0;
  if (getrandom(&r, sizeof(r), 0) != sizeof(r))
    r = static_cast<uint32_t>(absl::ToUnixNanos(absl::Now()));
  return absl::StrFormat("%08x", r);
}

std::string FirstLine(const std::string& text, size_t max) {
  std::string line = text.substr(0, text.find('\n'));
  // The tail of stderr usually ends with the message that matters; an empty first line
  // (leading newline) would say nothing.
  if (line.empty()) {
    size_t end = text.find_last_not_of("\n ");
    if (end != std::string::npos) {
      size_t start = text.rfind('\n', end);
      line = text.substr(start == std::string::npos ? 0 : start + 1,
                         end + 1 - (start == std::string::npos ? 0 : start + 1));
    }
  }
  if (line.size() > max) line = absl::StrCat(Utf8Prefix(line, max), "...");
  return line;
}

farm::v1::ActionEntry EntryFrom(const farm::v1::ActionStatus& s) {
  farm::v1::ActionEntry e;
  e.set_action_id(s.action_id());
  e.set_build_id(s.build_id());
  e.set_shard(s.shard());
  e.set_worker(s.result().cache_hit() ? "" : s.worker());
  e.set_state(s.state());
  *e.mutable_submitted_at() = s.submitted_at();
  if (IsSet(s.started_at())) *e.mutable_started_at() = s.started_at();
  if (IsSet(s.finished_at())) *e.mutable_finished_at() = s.finished_at();
  e.set_exit_code(s.result().exit_code());
  e.set_cache_hit(s.result().cache_hit());
  e.set_attempts(s.attempts());
  e.set_wall_seconds(s.result().wall_seconds());
  if (!s.result().cache_hit()) e.set_worker_cpu_arch(s.worker_cpu_arch());
  return e;
}

}  // namespace

BuildRegistry::BuildRegistry(StateStore* store, MetricsRegistry* metrics,
                             std::function<absl::Time()> clock)
    : store_(store),
      metrics_(metrics),
      clock_(std::move(clock)),
      nvcc_metrics_(metrics, farm::v1::COMPILE_CALL_KIND_NVCC),
      host_compile_metrics_(metrics, farm::v1::COMPILE_CALL_KIND_HOST),
      call_time_metrics_(metrics) {
  metrics_->AddRefreshHook([this] {
    std::map<std::pair<std::string, std::string>, int> counts;
    for (auto kind : {farm::v1::BUILD_KIND_COMPILE, farm::v1::BUILD_KIND_WHEEL}) {
      for (int s = farm::v1::BUILD_STATE_QUEUED; s <= farm::v1::BUILD_STATE_CANCELLED; ++s) {
        counts[{BuildKindName(kind), BuildStateName(static_cast<BuildState>(s))}] = 0;
      }
    }
    {
      absl::MutexLock lock(&mu_);
      for (const auto& [id, e] : builds_) {
        ++counts[{BuildKindName(e.record.kind()), BuildStateName(e.record.state())}];
      }
    }
    for (const auto& [key, n] : counts) {
      metrics_
          ->GetGauge("farm_builds", "Builds known to the coordinator, by kind and state.",
                     {{"kind", key.first}, {"state", key.second}})
          ->Set(n);
    }
  });
}

absl::Status BuildRegistry::Load() {
  absl::MutexLock lock(&mu_);
  // Runs inside ForEach, under the lock taken above (which the analysis cannot follow).
  FARM_RETURN_IF_ERROR(store_->ForEachRecord<Build>(
      Table::kBuilds,
      [&](const std::string& key, Build& record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        Entry e;
        e.record = std::move(record);
        e.record.clear_shards();
        builds_.insert_or_assign(key, std::move(e));
        return absl::OkStatus();
      }));
  // A compile build no action named has its state from its calls; the others get theirs
  // again when the scheduler replays their actions.
  for (auto& [id, e] : builds_) DeriveState(e, /*live=*/false);
  return absl::OkStatus();
}

void BuildRegistry::OnActionsChanged(const std::vector<ActionUpdate>& updates) {
  Apply(updates, /*live=*/true);
}

void BuildRegistry::OnActionsDeleted(const std::vector<DeletedAction>& deleted) {
  absl::MutexLock write(&write_mu_);
  std::vector<std::pair<std::string, uint64_t>> emptied;  // build id, log end
  {
    absl::MutexLock lock(&mu_);
    std::set<std::string> touched;
    for (const DeletedAction& d : deleted) {
      auto it = builds_.find(d.build_id);
      if (it == builds_.end()) continue;
      it->second.actions.erase(d.id);
      it->second.finished.Erase(d.id);
      touched.insert(d.build_id);
    }
    for (const std::string& id : touched) {
      const Entry& e = builds_.at(id);
      if (e.actions.empty() && e.finished.empty() && IsTerminalBuildState(e.record.state())) {
        emptied.emplace_back(id, e.record.log_bytes());
      }
    }
  }
  if (emptied.empty()) return;
  // Its progress can no longer be rebuilt from its actions after a restart: the build goes
  // with them, its log too.
  StateBatch batch;
  for (const auto& [id, log_end] : emptied) {
    batch.Delete(Table::kBuilds, id);
    BuildLogBlocks::StageDelete(batch, id, log_end);
  }
  auto log = ComponentLogger("coordinator");
  if (absl::Status s = store_->Write(batch); !s.ok()) {
    log->error("deleting finished builds past their retention: {}", s.ToString());
    return;
  }
  absl::MutexLock lock(&mu_);
  for (const auto& [id, log_end] : emptied) builds_.erase(id);
  log->info("deleted {} finished build(s) whose actions are past their retention, with their logs",
            emptied.size());
}

void BuildRegistry::OnActionsLoaded(const std::vector<ActionUpdate>& updates) {
  Apply(updates, /*live=*/false);
}

void BuildRegistry::Apply(const std::vector<ActionUpdate>& updates, bool live) {
  std::vector<std::string> created;
  {
    absl::MutexLock lock(&mu_);
    std::set<std::string> touched;
    Histogram* shard_durations = metrics_->GetHistogram(
        "farm_shard_duration_seconds",
        "From a shard's first action starting to its last finishing.", kDurationBuckets);
    for (const auto& u : updates) {
      const farm::v1::ActionStatus& st = u.status;
      if (st.state() == farm::v1::ACTION_STATE_RUNNING) {
        running_[st.action_id()] = EntryFrom(st);
      } else {
        running_.erase(st.action_id());
      }
      if (st.build_id().empty()) continue;  // belongs to no build
      auto [it, inserted] = builds_.try_emplace(st.build_id());
      Entry& b = it->second;
      if (inserted) {
        b.record.set_id(st.build_id());
        b.record.set_kind(farm::v1::BUILD_KIND_COMPILE);
        b.record.set_state(farm::v1::BUILD_STATE_QUEUED);
        *b.record.mutable_submitted_at() = st.submitted_at();
        created.push_back(st.build_id());
      }
      if (b.finished.Contains(st.action_id())) continue;  // a late update of a finished one
      auto tracked = b.actions.find(st.action_id());
      if (tracked != b.actions.end() && tracked->second.sequence >= u.sequence) continue;
      ShardProgress& shard = b.shards[st.shard()];
      const bool was_finished = shard.finished();
      if (tracked != b.actions.end()) {
        shard.Remove(tracked->second.facts);
      } else {
        tracked = b.actions.emplace(st.action_id(), TrackedAction()).first;
      }
      tracked->second = {u.sequence, ActionFacts::From(st), EntryFrom(st)};
      shard.Add(tracked->second.facts);
      if (IsTerminalActionState(st.state())) {
        b.finished.Insert(st.action_id());
        b.actions.erase(tracked);
      }
      if (live && !was_finished && shard.finished() && shard.started() != absl::InfiniteFuture()) {
        shard_durations->Observe(
            std::max(0.0, absl::ToDoubleSeconds(shard.last_finished() - shard.started())));
      }
      touched.insert(st.build_id());
    }
    for (const auto& id : touched) DeriveState(builds_.at(id), live);
  }
  if (!created.empty()) PersistCreated(created);
}

void BuildRegistry::DeriveState(Entry& e, bool live) {
  if (e.record.kind() != farm::v1::BUILD_KIND_COMPILE) return;
  uint32_t total = 0, pending = 0, running = 0, failed = 0, cancelled = 0;
  absl::Time started = absl::InfiniteFuture(), finished = absl::InfinitePast();
  const ActionFacts* first_failure = nullptr;
  std::string failed_shard;
  for (const auto& [name, s] : e.shards) {
    total += s.total();
    pending += s.queued() + s.running();
    running += s.running();
    failed += s.failed();
    cancelled += s.cancelled();
    started = std::min(started, s.started());
    finished = std::max(finished, s.last_finished());
    if (s.first_failure() &&
        (!first_failure || s.first_failure()->finished < first_failure->finished)) {
      first_failure = &*s.first_failure();
      failed_shard = name;
    }
  }
  BuildState state;
  std::string reason;
  if (total == 0) {
    DeriveStateFromCalls(e, live);
    return;
  }
  if (pending > 0) {
    state = (running > 0 || pending < total) ? farm::v1::BUILD_STATE_BUILDING
                                             : farm::v1::BUILD_STATE_QUEUED;
  } else if (failed > 0) {
    state = farm::v1::BUILD_STATE_FAILED;
    reason = absl::StrCat(failed, " of ", total, " actions failed; first in ",
                          failed_shard.empty() ? "(no shard)" : failed_shard);
    if (first_failure->state == farm::v1::ACTION_STATE_COMPLETED) {
      absl::StrAppend(&reason, " with exit code ", first_failure->exit_code);
    }
    if (!first_failure->error.empty()) {
      absl::StrAppend(&reason, ": ", FirstLine(first_failure->error, 300));
    }
  } else if (cancelled > 0) {
    state = farm::v1::BUILD_STATE_CANCELLED;
    reason = absl::StrCat(cancelled, " of ", total, " actions cancelled");
  } else {
    state = farm::v1::BUILD_STATE_SUCCEEDED;
  }
  const BuildState before = e.record.state();
  e.record.set_state(state);
  e.record.set_reason(reason);
  if (state != farm::v1::BUILD_STATE_QUEUED && started != absl::InfiniteFuture()) {
    *e.record.mutable_started_at() = ToProtoTime(started);
  }
  if (IsTerminalBuildState(state) && finished != absl::InfinitePast()) {
    *e.record.mutable_finished_at() = ToProtoTime(finished);
  } else {
    e.record.clear_finished_at();
  }
  if (live && !IsTerminalBuildState(before) && IsTerminalBuildState(state)) CountFinished(e.record);
}

void BuildRegistry::DeriveStateFromCalls(Entry& e, bool live) {
  // No action ran for it (a rebuild the compile cache answered whole): each reported call
  // has ended, and CountNvccCall kept when the first and the last were reported.
  const farm::v1::NvccCalls& nvcc = e.record.nvcc();
  const farm::v1::NvccCalls& host = e.record.host_compiles();
  const uint64_t calls = nvcc.total() + host.total();
  const uint64_t errors = nvcc.compile_errors() + host.compile_errors();
  const BuildState before = e.record.state();
  if (calls == 0) {
    e.record.set_state(farm::v1::BUILD_STATE_QUEUED);
    e.record.clear_reason();
  } else if (errors > 0) {
    e.record.set_state(farm::v1::BUILD_STATE_FAILED);
    e.record.set_reason(
        absl::StrCat(errors, " of ", calls, " compile calls stopped at a compile error"));
  } else {
    e.record.set_state(farm::v1::BUILD_STATE_SUCCEEDED);
    e.record.clear_reason();
  }
  if (live && !IsTerminalBuildState(before) && IsTerminalBuildState(e.record.state())) {
    CountFinished(e.record);
  }
}

void BuildRegistry::CountFinished(const Build& b) {
  metrics_
      ->GetCounter("farm_builds_finished_total", "Builds that reached a final state.",
                   {{"kind", BuildKindName(b.kind())}, {"state", BuildStateName(b.state())}})
      ->Increment();
  if (IsSet(b.started_at()) && IsSet(b.finished_at())) {
    metrics_
        ->GetHistogram("farm_build_duration_seconds", "From a build's start to its end.",
                       kDurationBuckets, {{"kind", BuildKindName(b.kind())}})
        ->Observe(std::max(0.0, absl::ToDoubleSeconds(FromProtoTime(b.finished_at()) -
                                                      FromProtoTime(b.started_at()))));
  }
}

void BuildRegistry::PersistCreated(const std::vector<std::string>& ids) {
  absl::MutexLock write(&write_mu_);
  StateBatch batch;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& id : ids) {
      auto it = builds_.find(id);
      if (it != builds_.end()) batch.Put(Table::kBuilds, id, it->second.record);
    }
  }
  if (absl::Status s = store_->Write(batch); !s.ok()) {
    // Not fatal: a compile build is rebuilt from its actions on the next start.
    ComponentLogger("coordinator")->error("cannot record new builds: {}", s.message());
  }
}

absl::Status BuildRegistry::Mutate(const std::string& id, const RecordChange& change) {
  absl::MutexLock write(&write_mu_);
  PendingChange one{.id = id, .change = &change};
  WriteChanges({&one});
  return one.result;
}

absl::Status BuildRegistry::MutateGrouped(const std::string& id, const RecordChange& change) {
  PendingChange mine{.id = id, .change = &change};
  {
    absl::MutexLock queue(&group_mu_);
    group_.push_back(&mine);
  }
  // Whoever takes the writer's place first writes every change queued by then (its own
  // included) in one synced batch; the others find theirs written. A thousand launchers'
  // reports then cost a few syncs, not one each in turn.
  absl::MutexLock write(&write_mu_);
  std::vector<PendingChange*> group;
  {
    absl::MutexLock queue(&group_mu_);
    if (mine.written) return mine.result;
    group.swap(group_);
  }
  WriteChanges(group);
  {
    absl::MutexLock queue(&group_mu_);
    for (PendingChange* p : group) p->written = true;
  }
  return mine.result;
}

void BuildRegistry::WriteChanges(const std::vector<PendingChange*>& changes) {
  std::map<std::string, Build> copies;
  std::vector<std::string> changed;  // in the order first changed
  StateBatch batch;
  for (PendingChange* p : changes) {
    auto it = copies.find(p->id);
    if (it == copies.end()) {
      absl::MutexLock lock(&mu_);
      auto found = builds_.find(p->id);
      if (found == builds_.end()) {
        p->result = absl::NotFoundError(
            absl::StrCat("no build '", p->id, "'. Fix: 'farmctl builds' lists the builds"));
        continue;
      }
      it = copies.emplace(p->id, found->second.record).first;
    }
    // A change that fails leaves the record, and the batch, as they were.
    Build tentative = it->second;
    StateBatch own;
    p->result = (*p->change)(tentative, own);
    if (!p->result.ok()) continue;
    // Reasons and verification notes quote what the build made (wheel member names, tool
    // output): text that is not UTF-8 would make the record unreadable to every client.
    EscapeInvalidUtf8Fields(&tentative);
    it->second = std::move(tentative);
    batch.Append(std::move(own));
    if (std::find(changed.begin(), changed.end(), p->id) == changed.end()) {
      changed.push_back(p->id);
    }
  }
  if (changed.empty()) return;
  for (const std::string& id : changed) batch.Put(Table::kBuilds, id, copies.at(id));
  if (absl::Status s = store_->Write(batch); !s.ok()) {
    for (PendingChange* p : changes) {
      if (p->result.ok()) p->result = s;
    }
    return;
  }
  absl::MutexLock lock(&mu_);
  for (const std::string& id : changed) {
    Build& copy = copies.at(id);
    Entry& entry = builds_.at(id);
    Build& current = entry.record;
    const bool compile = copy.kind() == farm::v1::BUILD_KIND_COMPILE;
    if (compile && !entry.shards.empty()) {
      // The state of a compile build follows its actions, which may have moved meanwhile.
      copy.set_state(current.state());
      copy.set_reason(current.reason());
      *copy.mutable_started_at() = current.started_at();
      *copy.mutable_finished_at() = current.finished_at();
    }
    current = std::move(copy);
    if (compile && entry.shards.empty()) DeriveStateFromCalls(entry, /*live=*/true);
  }
}

absl::StatusOr<Build> BuildRegistry::CreateWheelBuild(const WheelBuildSpec& spec) {
  if (spec.package.empty() || spec.version.empty()) {
    return absl::InvalidArgumentError("a wheel build needs a package name and a version");
  }
  const std::string id = spec.id.empty()
                             ? absl::StrCat(spec.package, "-", spec.version, "-", RandomSuffix())
                             : spec.id;
  FARM_RETURN_IF_ERROR(CheckBuildId(id));
  Build b;
  b.set_id(id);
  b.set_kind(farm::v1::BUILD_KIND_WHEEL);
  b.set_package(spec.package);
  b.set_version(spec.version);
  for (const auto& a : spec.archs) b.add_archs(a);
  *b.mutable_plan() = spec.plan;
  *b.mutable_submitted_by() = spec.submitted_by;
  b.set_stack_id(spec.stack_id);
  for (const auto& d : spec.depends_on) b.add_depends_on(d);
  if (spec.waiting_action.has_wheel_build()) *b.mutable_waiting_action() = spec.waiting_action;
  b.set_state(farm::v1::BUILD_STATE_QUEUED);
  *b.mutable_submitted_at() = ToProtoTime(clock_());
  EscapeInvalidUtf8Fields(&b);  // the plan quotes the recipe and the source
  absl::MutexLock write(&write_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (builds_.count(id) > 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("build '", id, "' exists already. Fix: choose another id"));
    }
  }
  FARM_RETURN_IF_ERROR(store_->Put(Table::kBuilds, id, b));
  absl::MutexLock lock(&mu_);
  builds_[id].record = b;
  b.clear_waiting_action();  // as Get shows it
  return b;
}

absl::Status BuildRegistry::SetState(const std::string& id, BuildState state,
                                     const std::string& reason) {
  if (state == farm::v1::BUILD_STATE_UNSPECIFIED || !farm::v1::BuildState_IsValid(state)) {
    return absl::InvalidArgumentError(absl::StrCat("no build state ", static_cast<int>(state)));
  }
  absl::Status s = Mutate(id, [&](Build& b, StateBatch&) {
    if (b.kind() != farm::v1::BUILD_KIND_WHEEL) {
      return absl::FailedPreconditionError(
          absl::StrCat("build '", id, "' is a compile build: its state follows its actions"));
    }
    if (IsTerminalBuildState(b.state())) {
      return absl::FailedPreconditionError(absl::StrCat("build '", id, "' already ",
                                                        BuildStateName(b.state()),
                                                        "; a finished build does not change"));
    }
    const absl::Time now = clock_();
    b.set_state(state);
    b.set_reason(reason);
    if (state != farm::v1::BUILD_STATE_QUEUED && !IsSet(b.started_at())) {
      *b.mutable_started_at() = ToProtoTime(now);
    }
    if (IsTerminalBuildState(state)) *b.mutable_finished_at() = ToProtoTime(now);
    return absl::OkStatus();
  });
  if (s.ok() && IsTerminalBuildState(state)) {
    absl::MutexLock lock(&mu_);
    CountFinished(builds_.at(id).record);
  }
  return s;
}

absl::Status BuildRegistry::SetWheel(const std::string& id, const farm::v1::WheelInfo& wheel) {
  return Mutate(id, [&](Build& b, StateBatch&) {
    *b.mutable_wheel() = wheel;
    return absl::OkStatus();
  });
}

absl::Status BuildRegistry::SetVerification(const std::string& id,
                                            const farm::v1::Verification& verification) {
  return Mutate(id, [&](Build& b, StateBatch&) {
    *b.mutable_verification() = verification;
    return absl::OkStatus();
  });
}

absl::Status BuildRegistry::SetSmoke(const std::string& id,
                                     const std::vector<farm::v1::SmokeResult>& smoke) {
  return Mutate(id, [&](Build& b, StateBatch&) {
    b.clear_smoke();
    for (const auto& r : smoke) *b.add_smoke() = r;
    return absl::OkStatus();
  });
}

absl::Status BuildRegistry::AddPublished(const std::string& id, const std::string& where) {
  return Mutate(id, [&](Build& b, StateBatch&) {
    if (std::find(b.published_to().begin(), b.published_to().end(), where) ==
        b.published_to().end()) {
      b.add_published_to(where);
    }
    return absl::OkStatus();
  });
}

absl::Status BuildRegistry::SetBuildHost(const std::string& id, const std::string& worker) {
  return Mutate(id, [&](Build& b, StateBatch&) {
    b.set_build_host(worker);
    return absl::OkStatus();
  });
}

absl::Status BuildRegistry::SetBuildAction(const std::string& id, const std::string& action_id) {
  return Mutate(id, [&](Build& b, StateBatch&) {
    b.set_build_action_id(action_id);
    b.clear_waiting_action();
    return absl::OkStatus();
  });
}

absl::StatusOr<farm::v1::Action> BuildRegistry::WaitingAction(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = builds_.find(id);
  if (it == builds_.end() || !it->second.record.has_waiting_action()) {
    return absl::NotFoundError(absl::StrCat("build '", id, "' has no host action waiting"));
  }
  return it->second.record.waiting_action();
}

absl::StatusOr<uint64_t> BuildRegistry::AppendLog(const std::string& id, absl::string_view data) {
  if (data.size() > kMaxAppendBytes) {
    return absl::InvalidArgumentError(absl::StrCat("a log append of ", data.size(),
                                                   " bytes is too large; send at most ",
                                                   kMaxAppendBytes, " at a time"));
  }
  uint64_t end = 0;
  absl::Status s = Mutate(id, [&](Build& b, StateBatch& batch) {
    if (absl::Status st = BuildLogBlocks::StageAppend(*store_, batch, id, b.log_bytes(), data);
        !st.ok()) {
      return st;
    }
    end = b.log_bytes() + data.size();
    b.set_log_bytes(end);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return end;
}

absl::Status BuildRegistry::CountNvccCall(const std::string& id,
                                          const farm::v1::ReportNvccCallRequest& report) {
  FARM_RETURN_IF_ERROR(CheckNvccCallReport(report));
  const std::string reason = report.outcome() == farm::v1::NVCC_CALL_OUTCOME_FALLBACK
                                 ? FallbackKey(report)
                                 : std::string();
  bool without_actions = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = builds_.find(id);
    // A call the compile cache answered ran no action, so a build whose every call it answered
    // (a rebuild of unchanged sources) has none to start it: its first such report does. A
    // call that ran anything never starts one (its actions do): a fallback under a mistyped
    // FARM_BUILD_ID is refused, not made a build.
    if (it == builds_.end() && report.outcome() == farm::v1::NVCC_CALL_OUTCOME_CACHED) {
      it = builds_.try_emplace(id).first;
      Build& b = it->second.record;
      b.set_id(id);
      b.set_kind(farm::v1::BUILD_KIND_COMPILE);
      b.set_state(farm::v1::BUILD_STATE_QUEUED);
      *b.mutable_submitted_at() = ToProtoTime(clock_());
    }
    without_actions = it != builds_.end() && it->second.shards.empty() &&
                      it->second.record.kind() == farm::v1::BUILD_KIND_COMPILE;
  }
  absl::Status s = MutateGrouped(id, [&](Build& b, StateBatch&) {
    farm::v1::NvccCalls& counts = CallCountsOf(b, report.kind());
    farm::coordinator::CountNvccCall(counts, report.outcome(), reason, report.reason());
    if (HasCallTimes(report)) AddCallTimes(*counts.mutable_times(), report);
    if (without_actions) {
      // Its calls are all it has: the first report starts it, each one ends it again.
      const absl::Time now = clock_();
      if (!IsSet(b.started_at())) *b.mutable_started_at() = ToProtoTime(now);
      *b.mutable_finished_at() = ToProtoTime(now);
    }
    return absl::OkStatus();
  });
  if (s.ok()) {
    (report.kind() == farm::v1::COMPILE_CALL_KIND_HOST ? host_compile_metrics_ : nvcc_metrics_)
        .Count(report.outcome(), reason);
    call_time_metrics_.Observe(report);
  }
  return s;
}

size_t BuildRegistry::DeleteBuildsWithoutActions(absl::Time finished_before) {
  absl::MutexLock write(&write_mu_);
  std::vector<std::pair<std::string, uint64_t>> past;  // build id, log end
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, e] : builds_) {
      if (e.record.kind() == farm::v1::BUILD_KIND_COMPILE && e.shards.empty() &&
          e.actions.empty() && e.finished.empty() && IsTerminalBuildState(e.record.state()) &&
          IsSet(e.record.finished_at()) &&
          FromProtoTime(e.record.finished_at()) < finished_before) {
        past.emplace_back(id, e.record.log_bytes());
      }
    }
  }
  if (past.empty()) return 0;
  StateBatch batch;
  for (const auto& [id, log_end] : past) {
    batch.Delete(Table::kBuilds, id);
    BuildLogBlocks::StageDelete(batch, id, log_end);
  }
  auto log = ComponentLogger("coordinator");
  if (absl::Status s = store_->Write(batch); !s.ok()) {
    log->error("deleting finished builds that ran no action: {}", s.ToString());
    return 0;
  }
  absl::MutexLock lock(&mu_);
  for (const auto& [id, log_end] : past) builds_.erase(id);
  log->info("deleted {} finished build(s) that ran no action, past the actions' retention",
            past.size());
  return past.size();
}

Build BuildRegistry::Render(const Entry& e) const {
  Build b = e.record;
  b.clear_waiting_action();  // internal: the queued form of the build is its plan
  for (const auto& [name, shard] : e.shards) *b.add_shards() = shard.ToProto(name);
  if (b.archs().empty()) {
    for (const auto& [name, shard] : e.shards) {
      if (!name.empty()) b.add_archs(name);
    }
  }
  return b;
}

absl::StatusOr<Build> BuildRegistry::Get(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = builds_.find(id);
  if (it == builds_.end()) {
    return absl::NotFoundError(
        absl::StrCat("no build '", id, "'. Fix: 'farmctl builds' lists the builds"));
  }
  return Render(it->second);
}

std::vector<Build> BuildRegistry::List(size_t limit) const {
  std::vector<const Entry*> entries;
  absl::MutexLock lock(&mu_);
  for (const auto& [id, e] : builds_) entries.push_back(&e);
  std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) {
    const auto& ta = a->record.submitted_at();
    const auto& tb = b->record.submitted_at();
    if (ta.seconds() != tb.seconds()) return ta.seconds() > tb.seconds();
    if (ta.nanos() != tb.nanos()) return ta.nanos() > tb.nanos();
    return a->record.id() > b->record.id();
  });
  if (limit > 0 && entries.size() > limit) entries.resize(limit);
  std::vector<Build> out;
  out.reserve(entries.size());
  for (const Entry* e : entries) out.push_back(Render(*e));
  return out;
}

absl::StatusOr<std::vector<farm::v1::ActionEntry>> BuildRegistry::Actions(
    const std::string& build_id, farm::v1::ActionState state, size_t limit) const {
  auto wanted = [state](farm::v1::ActionState s) {
    return state == farm::v1::ACTION_STATE_UNSPECIFIED || s == state;
  };
  // Live entries are copied here; finished ones are named by id and read from the store.
  std::vector<std::pair<std::string, std::optional<farm::v1::ActionEntry>>> items;
  {
    absl::MutexLock lock(&mu_);
    if (build_id.empty() && state == farm::v1::ACTION_STATE_RUNNING) {
      for (const auto& [id, e] : running_) items.emplace_back(id, e);
    } else {
      auto add = [&](const Entry& b) {
        for (const auto& [id, a] : b.actions) {
          if (wanted(a.entry.state())) items.emplace_back(id, a.entry);
        }
        if (state == farm::v1::ACTION_STATE_UNSPECIFIED || IsTerminalActionState(state)) {
          b.finished.ForEach([&](const std::string& id) { items.emplace_back(id, std::nullopt); });
        }
      };
      if (!build_id.empty()) {
        auto it = builds_.find(build_id);
        if (it == builds_.end()) {
          return absl::NotFoundError(
              absl::StrCat("no build '", build_id, "'. Fix: 'farmctl builds' lists the builds"));
        }
        add(it->second);
      } else {
        for (const auto& [bid, b] : builds_) add(b);
      }
    }
  }
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  // Newest first until the limit, then back in order: a long build's timeline is most useful
  // at its end, and only what is shown is read from the store.
  std::vector<farm::v1::ActionEntry> out;
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (limit > 0 && out.size() >= limit) break;
    if (!it->second) {
      farm::v1::ActionRecord record;
      if (!store_->Get(Table::kActions, it->first, &record).ok()) continue;  // deleted meanwhile
      if (!wanted(record.status().state())) continue;
      it->second = EntryFrom(record.status());
    }
    out.push_back(*std::move(it->second));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

absl::StatusOr<farm::v1::GetBuildLogsResponse> BuildRegistry::ReadLog(const std::string& id,
                                                                      uint64_t offset,
                                                                      uint64_t max_bytes) const {
  uint64_t end = 0;
  bool finished = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = builds_.find(id);
    if (it == builds_.end()) {
      return absl::NotFoundError(
          absl::StrCat("no build '", id, "'. Fix: 'farmctl builds' lists the builds"));
    }
    end = it->second.record.log_bytes();
    finished = IsTerminalBuildState(it->second.record.state());
  }
  auto chunk = BuildLogBlocks::Read(*store_, id, end, offset, max_bytes);
  if (!chunk.ok()) return chunk.status();
  chunk->set_build_finished(finished);
  return chunk;
}

}  // namespace farm::coordinator
