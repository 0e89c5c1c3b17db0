// Builds: what the farm is building, how far each arch shard is, and how it ended.
//
// A *compile* build exists as soon as an action names its build_id; its progress and state
// follow its actions (fed by the scheduler as an ActionObserver). A *wheel* build is created
// by the wheel pipeline (issue #6) through the API below, which also drives its state; its
// shards still come from the actions submitted with its id.
//
// Build records (everything but shard progress) are kept in the "builds" column family;
// shard progress is rebuilt from the scheduler's action records on start. Logs are kept in
// "build_logs", the last 8 MiB per build.
//
// API for the wheel pipeline (every call is durable before it returns; all are safe to
// call from any thread; NOT_FOUND for an unknown build id):
//   CreateWheelBuild({package, version, archs, id?})  -> the new build (QUEUED)
//   SetState(id, BUILD_STATE_BUILDING / VERIFYING / PUBLISHING / SUCCEEDED / FAILED /
//            CANCELLED, reason)   FAILED_PRECONDITION once the build is terminal
//   SetWheel(id, WheelInfo{filename, size_bytes, device_code_bytes{arch: bytes}, sha256})
//   SetVerification(id, Verification{ok, message, rows[{arch, present, size_bytes, note}]})
//   AddPublished(id, "https://pypi.example/simple/torch/")
//   SetBuildHost(id, worker_name)
//   SetBuildAction(id, action_id)   the action that runs the recipe on the build host
//   WaitingAction(id)               a stack build's host action, until it is queued
//   AppendLog(id, bytes) -> the log's new length (also the AppendBuildLog RPC)
//
// For farm-nvcc and farm-cc (ReportNvccCall), any kind of build:
//   CountNvccCall(id, report)   one call's outcome, into Build.nvcc (kind NVCC) or
//                               Build.host_compiles (kind HOST) and /metrics, with its
//                               times when the farm ran it (call_times.h). A call the
//                               compile cache answered starts a compile build no action
//                               named yet (a rebuild answered whole runs none): such a
//                               build's state and times follow its calls.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/builds/action_id_set.h"
#include "coordinator/builds/call_times.h"
#include "coordinator/builds/nvcc_call_counts.h"
#include "coordinator/builds/shard_progress.h"
#include "coordinator/scheduler/action_observer.h"
#include "coordinator/state_store.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/builds/build_state.h"
#include "libfarm/metrics/registry.h"

namespace farm::coordinator {

struct WheelBuildSpec {
  std::string package;
  std::string version;
  std::vector<std::string> archs;    // "sm_90", ...
  std::string id;                    // empty: "<package>-<version>-<random>"
  farm::v1::BuildPlan plan;          // what `farmctl submit` planned
  farm::v1::Submitter submitted_by;  // who asked for it
  // A build of a stack: the stack, the builds it waits for, and its host action, kept until
  // they have succeeded (WaitingAction; SetBuildAction drops it).
  std::string stack_id;
  std::vector<std::string> depends_on;
  farm::v1::Action waiting_action;
};

class BuildRegistry final : public ActionObserver {
 public:
  BuildRegistry(StateStore* store, MetricsRegistry* metrics, std::function<absl::Time()> clock);

  // Reads the build records. Call before Scheduler::AddObserver(this), which replays the
  // actions and so rebuilds shard progress.
  absl::Status Load();

  // The wheel pipeline's API (see the top of this file).
  absl::StatusOr<farm::v1::Build> CreateWheelBuild(const WheelBuildSpec& spec);
  absl::Status SetState(const std::string& id, farm::v1::BuildState state,
                        const std::string& reason);
  absl::Status SetWheel(const std::string& id, const farm::v1::WheelInfo& wheel);
  absl::Status SetVerification(const std::string& id, const farm::v1::Verification& verification);
  absl::Status AddPublished(const std::string& id, const std::string& where);
  // Replaces the build's smoke test results (one per requested SM).
  absl::Status SetSmoke(const std::string& id, const std::vector<farm::v1::SmokeResult>& smoke);
  absl::Status SetBuildHost(const std::string& id, const std::string& worker);
  absl::Status SetBuildAction(const std::string& id, const std::string& action_id);
  // The host action a stack's build keeps until its dependencies succeeded (Build.depends_on);
  // NOT_FOUND once it was queued (or for a build that never waited).
  absl::StatusOr<farm::v1::Action> WaitingAction(const std::string& id) const;
  absl::StatusOr<uint64_t> AppendLog(const std::string& id, absl::string_view data);
  // Checks the report (CheckNvccCallReport) and counts it under its reason class, in the
  // counts of its kind.
  absl::Status CountNvccCall(const std::string& id, const farm::v1::ReportNvccCallRequest& report);

  // Reads.
  absl::StatusOr<farm::v1::Build> Get(const std::string& id) const;
  // Newest first.
  std::vector<farm::v1::Build> List(size_t limit) const;
  // Oldest first. Empty `build_id`: every build, and with state RUNNING also actions that
  // belong to no build (what the fleet is doing now).
  absl::StatusOr<std::vector<farm::v1::ActionEntry>> Actions(const std::string& build_id,
                                                             farm::v1::ActionState state,
                                                             size_t limit) const;
  absl::StatusOr<farm::v1::GetBuildLogsResponse> ReadLog(const std::string& id, uint64_t offset,
                                                         uint64_t max_bytes) const;

  // Deletes the finished compile builds that no action ever named (a rebuild the compile
  // cache answered whole) and that finished before `finished_before`, with their logs: builds
  // with actions leave with their last action (OnActionsDeleted). Returns how many left.
  size_t DeleteBuildsWithoutActions(absl::Time finished_before);

  // ActionObserver.
  void OnActionsChanged(const std::vector<ActionUpdate>& updates) override;
  void OnActionsLoaded(const std::vector<ActionUpdate>& updates) override;
  // Forgets deleted actions; a finished build left with none is deleted with its log.
  void OnActionsDeleted(const std::vector<DeletedAction>& deleted) override;

 private:
  struct TrackedAction {
    uint64_t sequence = 0;
    ActionFacts facts;
    farm::v1::ActionEntry entry;
  };
  struct Entry {
    farm::v1::Build record;  // as stored: no shards; state is derived for compile builds
    std::map<std::string, ShardProgress> shards;
    // Live actions by id (ids sort in submit order). A finished action is only counted in
    // its shard and remembered by its id, compactly: its record is in the store, read when
    // listed, so a build's memory grows by some 40 bytes per finished action kept.
    std::map<std::string, TrackedAction> actions;
    ActionIdSet finished;
  };

  void Apply(const std::vector<ActionUpdate>& updates, bool live);
  // Recomputes a compile build's state from its shards.
  void DeriveState(Entry& entry, bool live) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A compile build without actions: its state from its reported calls (ended, failed at a
  // compile error, or none yet); its times are those of the reports.
  void DeriveStateFromCalls(Entry& entry, bool live) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CountFinished(const farm::v1::Build& build) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  farm::v1::Build Render(const Entry& entry) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  using RecordChange = std::function<absl::Status(farm::v1::Build&, StateBatch&)>;
  // One change of a record waiting to be written; `written` once a writer has taken it.
  struct PendingChange {
    std::string id;
    const RecordChange* change = nullptr;
    absl::Status result;
    bool written = false;
  };
  // Applies `change` to a copy of the record, writes it (with the ops it staged), then keeps it.
  absl::Status Mutate(const std::string& id, const RecordChange& change);
  // The same for changes that read nothing from the store (a call's counts): those queued
  // at once are written together, in one synced batch.
  absl::Status MutateGrouped(const std::string& id, const RecordChange& change);
  // Applies each change in turn to a copy of its record (a failed one is left out), writes
  // the changed records in one batch, then keeps them; each change's result in it.
  void WriteChanges(const std::vector<PendingChange*>& changes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void PersistCreated(const std::vector<std::string>& ids);

  StateStore* const store_;
  MetricsRegistry* const metrics_;
  const std::function<absl::Time()> clock_;
  NvccCallMetrics nvcc_metrics_;
  NvccCallMetrics host_compile_metrics_;
  CallTimeMetrics call_time_metrics_;

  // Serializes record writes so the store always ends with the newest record; taken before mu_.
  absl::Mutex write_mu_;
  // Changes queued for MutateGrouped's next writer; taken after write_mu_ or alone.
  absl::Mutex group_mu_;
  std::vector<PendingChange*> group_ ABSL_GUARDED_BY(group_mu_);
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> builds_ ABSL_GUARDED_BY(mu_);
  // Running actions of any build or none, for the fleet view.
  std::map<std::string, farm::v1::ActionEntry> running_ ABSL_GUARDED_BY(mu_);
};

}  // namespace farm::coordinator
