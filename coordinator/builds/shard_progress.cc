#include "coordinator/builds/shard_progress.h"

#include <cmath>

#include "libfarm/actions/action_client.h"
#include "libfarm/time/proto_time.h"

namespace farm::coordinator {
namespace {

absl::Time TimeOrPast(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return absl::InfinitePast();
  return FromProtoTime(ts);
}

}  // namespace

ActionFacts ActionFacts::From(const farm::v1::ActionStatus& s) {
  ActionFacts f;
  f.id = s.action_id();
  f.state = s.state();
  f.succeeded = s.state() == farm::v1::ACTION_STATE_COMPLETED && s.result().exit_code() == 0;
  f.cache_hit = s.result().cache_hit();
  f.worker = s.worker();
  f.worker_cpu_arch = s.worker_cpu_arch();
  f.cpu_seconds = s.result().cpu_seconds();
  f.wall_seconds = s.result().wall_seconds();
  f.submitted = TimeOrPast(s.submitted_at());
  f.started = TimeOrPast(s.started_at());
  f.finished = TimeOrPast(s.finished_at());
  f.exit_code = s.result().exit_code();
  if (s.state() == farm::v1::ACTION_STATE_COMPLETED && !f.succeeded) {
    f.error = s.result().stderr_tail();
    if (f.error.empty()) f.error = s.result().stdout_tail();
  } else if (s.state() == farm::v1::ACTION_STATE_FAILED) {
    f.error = s.error();
  }
  return f;
}

bool ActionFacts::terminal() const { return IsTerminalActionState(state); }

bool ActionFacts::failed() const {
  return state == farm::v1::ACTION_STATE_FAILED ||
         (state == farm::v1::ACTION_STATE_COMPLETED && !succeeded);
}

void ShardProgress::Add(const ActionFacts& a) {
  ++total_;
  switch (a.state) {
    case farm::v1::ACTION_STATE_QUEUED:
      ++queued_;
      break;
    case farm::v1::ACTION_STATE_RUNNING:
      ++running_;
      break;
    case farm::v1::ACTION_STATE_CANCELLED:
      ++cancelled_;
      break;
    default:
      if (a.failed()) {
        ++failed_;
      } else if (a.succeeded) {
        ++done_;
        if (a.cache_hit) ++cached_;
      }
      break;
  }
  if (a.terminal()) {
    cpu_seconds_ += a.cpu_seconds;
    wall_seconds_ += a.wall_seconds;
    if (a.finished > last_finished_) last_finished_ = a.finished;
  }
  // A cache hit never ran here; its "worker" is whoever ran it first.
  if (!a.worker.empty() && !a.cache_hit) {
    ++workers_[a.worker];
    if (!a.worker_cpu_arch.empty()) worker_cpu_archs_[a.worker] = a.worker_cpu_arch;
  }
  // Work starts when an action is leased; one that never ran (a cache hit, or refused) marks
  // its shard started when it finished. Queued actions say nothing, so progress watched live
  // and progress replayed from final records agree.
  const absl::Time start = a.started != absl::InfinitePast() ? a.started
                           : a.terminal()                    ? a.finished
                                                             : absl::InfinitePast();
  if (start != absl::InfinitePast() && start < first_started_) first_started_ = start;
  if (a.failed() && (!first_failure_ || a.finished < first_failure_->finished)) {
    first_failure_ = a;
  }
}

void ShardProgress::Remove(const ActionFacts& a) {
  --total_;
  switch (a.state) {
    case farm::v1::ACTION_STATE_QUEUED:
      --queued_;
      break;
    case farm::v1::ACTION_STATE_RUNNING:
      --running_;
      break;
    case farm::v1::ACTION_STATE_CANCELLED:
      --cancelled_;
      break;
    default:
      if (a.failed()) {
        --failed_;
      } else if (a.succeeded) {
        --done_;
        if (a.cache_hit) --cached_;
      }
      break;
  }
  if (a.terminal()) {
    cpu_seconds_ -= a.cpu_seconds;
    wall_seconds_ -= a.wall_seconds;
  }
  if (!a.worker.empty() && !a.cache_hit) {
    auto it = workers_.find(a.worker);
    if (it != workers_.end() && --it->second <= 0) {
      workers_.erase(it);
      worker_cpu_archs_.erase(a.worker);
    }
  }
}

farm::v1::Shard ShardProgress::ToProto(const std::string& name) const {
  farm::v1::Shard s;
  s.set_name(name);
  s.set_total(total_);
  s.set_queued(queued_);
  s.set_running(running_);
  s.set_done(done_);
  s.set_failed(failed_);
  s.set_cached(cached_);
  s.set_cancelled(cancelled_);
  // Milliseconds: sums taken in a different order (live vs. replayed on start) then agree.
  s.set_cpu_seconds(std::round(cpu_seconds_ * 1000) / 1000);
  s.set_wall_seconds(std::round(wall_seconds_ * 1000) / 1000);
  for (const auto& [w, n] : workers_) {
    s.add_workers(w);
    auto cpu = worker_cpu_archs_.find(w);
    if (cpu != worker_cpu_archs_.end()) (*s.mutable_worker_cpu_archs())[w] = cpu->second;
  }
  if (first_started_ != absl::InfiniteFuture())
    *s.mutable_started_at() = ToProtoTime(first_started_);
  if (finished() && last_finished_ != absl::InfinitePast()) {
    *s.mutable_finished_at() = ToProtoTime(last_finished_);
  }
  if (first_failure_) {
    s.set_failed_action_id(first_failure_->id);
    s.set_error(first_failure_->error);
    s.set_failed_exit_code(first_failure_->exit_code);
  }
  return s;
}

}  // namespace farm::coordinator
