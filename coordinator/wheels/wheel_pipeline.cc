#include "coordinator/wheels/wheel_pipeline.h"

#include <limits>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "coordinator/wheels/build_planner.h"
#include "coordinator/wheels/source_tree.h"
#include "coordinator/wheels/wheel_name_conflict.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/output_tail.h"
#include "libfarm/recipes/recipe_proto.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {
namespace {

// The shard the host action is filed under, beside the arch shards of its device compiles.
constexpr char kHostShard[] = "host";
// A whole PyTorch build takes hours on a small host; the scheduler caps actions at a day.
constexpr uint32_t kBuildTimeoutSeconds = 12 * 3600;
constexpr absl::Duration kPollInterval = absl::Milliseconds(300);

// The last `max_lines` non-empty lines of a command's output, for a failure reason.
std::string HostFailure(const farm::v1::ActionStatus& st) {
  if (st.state() == farm::v1::ACTION_STATE_FAILED) {
    return absl::StrCat("the build could not run: ", st.error());
  }
  const auto& r = st.result();
  // The host merges the command's stderr into stdout; stderr has the worker's own words.
  const std::string tail = !r.stderr_tail().empty() ? r.stderr_tail() : r.stdout_tail();
  return absl::StrCat("the build command failed with exit code ", r.exit_code(), " on ", r.worker(),
                      ":\n", TailLines(tail, 12));
}

}  // namespace

WheelPipeline::WheelPipeline(BuildRegistry* builds, Scheduler* scheduler, WorkerRegistry* workers,
                             BlobStore* blobs, const RecipeDirectory* recipes,
                             WheelFinisher* finisher)
    : builds_(builds),
      scheduler_(scheduler),
      workers_(workers),
      blobs_(blobs),
      recipes_(recipes),
      finisher_(finisher) {}

WheelPipeline::~WheelPipeline() { Stop(); }

void WheelPipeline::Start() {
  {
    absl::MutexLock lock(&mu_);
    for (const auto& b : builds_->List(std::numeric_limits<size_t>::max())) {
      if (b.kind() == farm::v1::BUILD_KIND_WHEEL && !IsTerminalBuildState(b.state())) {
        active_.insert(b.id());
      }
    }
    if (!active_.empty()) {
      ComponentLogger("coordinator")->info("resuming {} unfinished wheel build(s)", active_.size());
    }
  }
  thread_ = std::thread([this] { Loop(); });
}

void WheelPipeline::Stop() {
  if (!thread_.joinable()) return;
  stop_.Notify();
  thread_.join();
}

absl::StatusOr<farm::v1::SubmitBuildResponse> WheelPipeline::Submit(
    const farm::v1::SubmitBuildRequest& request, const farm::v1::Submitter& submitted_by) {
  auto planned =
      PlanWheelBuild(request.recipe(), request.archs(), *recipes_, workers_->ListOnline(),
                     {.cpu_arch = request.cpu_arch(),
                      .glibc_max = request.glibc_max(),
                      .python = request.python(),
                      .placement = scheduler_->placement()});
  if (!planned.ok()) return planned.status();
  farm::v1::SubmitBuildResponse response;
  farm::v1::BuildPlan& plan = *response.mutable_plan();
  plan = planned->plan;
  FARM_RETURN_IF_ERROR(CheckWheelNameIsFree(plan, builds_->List(0)));
  // The recipe's [smoke], run between verifying and publishing (smoke_stage.h).
  if (const auto proto = RecipeToProto(*planned->recipe); proto.has_smoke()) {
    *plan.mutable_smoke() = proto.smoke();
  }

  const RecipeSource& source = planned->version->source;
  std::vector<farm::v1::InputFile> inputs;
  if (request.has_source()) {
    if (source.kind == RecipeSource::Kind::kGit) {
      return absl::InvalidArgumentError(
          absl::StrCat("recipe '", planned->recipe->name, "' builds from git (", source.git_url,
                       "); --source is for recipes whose source kind is \"upload\""));
    }
    FARM_ASSIGN_OR_RETURN(
        inputs, CheckUploadedSource({request.source().begin(), request.source().end()}, blobs_));
    plan.set_source(absl::StrCat("upload of ", inputs.size(), " files"));
  } else if (source.kind == RecipeSource::Kind::kUpload) {
    if (source.default_dir.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("recipe '", planned->recipe->name,
                       "' builds an uploaded tree and names no default. Fix: pass --source DIR"));
    }
    if (!request.dry_run()) {
      FARM_ASSIGN_OR_RETURN(inputs, IngestSourceTree(source.default_dir, blobs_));
    }
  }
  plan.set_source_files(static_cast<uint32_t>(inputs.size()));
  if (request.dry_run()) return response;

  WheelBuildSpec spec{.package = plan.package(),
                      .version = plan.version(),
                      .plan = plan,
                      .submitted_by = submitted_by};
  for (const auto& shard : plan.shards()) spec.archs.push_back(shard.name());
  auto build = builds_->CreateWheelBuild(spec);
  if (!build.ok()) return build.status();

  farm::v1::Action action;
  farm::v1::WheelBuildTask* task = action.mutable_wheel_build();
  *task->mutable_recipe() = RecipeToProto(*planned->recipe);
  task->mutable_recipe()->set_python(planned->python);
  task->set_version(plan.version());
  task->set_archs(plan.archs());
  task->set_cuda_version(plan.cuda_version());
  uint32_t farm_slots = 0;
  for (const auto& w : workers_->ListOnline()) farm_slots += w.capabilities().slots();
  task->set_farm_slots(farm_slots);
  *task->mutable_source() =
      task->recipe()
          .versions(static_cast<int>(planned->version - planned->recipe->versions.data()))
          .source();
  for (auto& in : inputs) *action.add_inputs() = std::move(in);
  *action.mutable_requirements() = planned->host_requirements;
  action.set_timeout_seconds(kBuildTimeoutSeconds);
  action.set_build_id(build->id());
  action.set_shard(kHostShard);
  action.set_skip_cache(true);  // the host's own work reruns; its device compiles are cached
  auto statuses = scheduler_->Execute({action});
  if (!statuses.ok()) {
    builds_
        ->SetState(build->id(), farm::v1::BUILD_STATE_FAILED,
                   absl::StrCat("could not queue the build: ", statuses.status().message()))
        .IgnoreError();
    return statuses.status();
  }
  FARM_RETURN_IF_ERROR(builds_->SetBuildAction(build->id(), statuses->front().action_id()));
  builds_
      ->AppendLog(build->id(),
                  absl::StrCat("wheelfarm: queued ", plan.package(), " ", plan.version(), " for ",
                               plan.archs(), " with CUDA ", plan.cuda_version(),
                               "; build hosts: ", absl::StrJoin(plan.build_hosts(), ", "), "\n"))
      .IgnoreError();
  {
    absl::MutexLock lock(&mu_);
    active_.insert(build->id());
  }
  FARM_ASSIGN_OR_RETURN(*response.mutable_build(), builds_->Get(build->id()));
  return response;
}

absl::StatusOr<farm::v1::Build> WheelPipeline::Cancel(const std::string& build_id) {
  auto build = builds_->Get(build_id);
  if (!build.ok()) return build.status();
  if (IsTerminalBuildState(build->state())) {
    return absl::FailedPreconditionError(
        absl::StrCat("build ", build_id, " has already ", BuildStateName(build->state())));
  }
  FARM_RETURN_IF_ERROR(
      builds_->SetState(build_id, farm::v1::BUILD_STATE_CANCELLED, "cancelled by farmctl cancel"));
  // The host action first (its worker kills the build), then any device compile left.
  if (!build->build_action_id().empty()) scheduler_->Cancel(build->build_action_id()).IgnoreError();
  for (auto state : {farm::v1::ACTION_STATE_QUEUED, farm::v1::ACTION_STATE_RUNNING}) {
    auto actions = builds_->Actions(build_id, state, 0);
    if (!actions.ok()) continue;
    for (const auto& a : *actions) scheduler_->Cancel(a.action_id()).IgnoreError();
  }
  builds_->AppendLog(build_id, "wheelfarm: cancelled by farmctl cancel\n").IgnoreError();
  ComponentLogger("coordinator")->info("build {}: cancelled", build_id);
  return builds_->Get(build_id);
}

void WheelPipeline::Loop() {
  while (!stop_.WaitForNotificationWithTimeout(kPollInterval)) {
    std::set<std::string> active;
    {
      absl::MutexLock lock(&mu_);
      active = active_;
    }
    for (const auto& id : active) {
      if (stop_.HasBeenNotified()) return;
      Advance(id);
    }
  }
}

void WheelPipeline::Advance(const std::string& id) {
  auto log = ComponentLogger("coordinator");
  auto build = builds_->Get(id);
  const bool finished = !build.ok() || IsTerminalBuildState(build->state());
  if (finished || build->build_action_id().empty()) {
    if (finished) {
      absl::MutexLock lock(&mu_);
      active_.erase(id);
    }
    return;
  }
  // Verified and smoke testing on GPU workers: the finisher follows the tests.
  if (build->smoke_size() > 0 && build->state() == farm::v1::BUILD_STATE_VERIFYING) {
    if (absl::Status s = finisher_->FollowSmoke(id, build->plan()); !s.ok()) {
      log->warn("build {}: {}", id, s.message());
    }
    return;
  }
  auto st = scheduler_->Get(build->build_action_id());
  if (!st.ok()) {
    builds_
        ->SetState(id, farm::v1::BUILD_STATE_FAILED,
                   absl::StrCat("the build's host action is gone: ", st.status().message()))
        .IgnoreError();
    return;
  }
  switch (st->state()) {
    case farm::v1::ACTION_STATE_QUEUED:
      return;
    case farm::v1::ACTION_STATE_RUNNING:
      if (build->state() == farm::v1::BUILD_STATE_QUEUED) {
        builds_->SetBuildHost(id, st->worker()).IgnoreError();
        builds_
            ->SetState(id, farm::v1::BUILD_STATE_BUILDING,
                       absl::StrCat("running the recipe on ", st->worker()))
            .IgnoreError();
      }
      return;
    case farm::v1::ACTION_STATE_CANCELLED:
      builds_
          ->SetState(id, farm::v1::BUILD_STATE_CANCELLED, "the build's host action was cancelled")
          .IgnoreError();
      return;
    case farm::v1::ACTION_STATE_FAILED:
      builds_->SetState(id, farm::v1::BUILD_STATE_FAILED, HostFailure(*st)).IgnoreError();
      return;
    default:
      break;
  }
  if (build->build_host().empty()) builds_->SetBuildHost(id, st->result().worker()).IgnoreError();
  if (st->result().exit_code() != 0) {
    builds_->SetState(id, farm::v1::BUILD_STATE_FAILED, HostFailure(*st)).IgnoreError();
    return;
  }
  // A build host returns the one wheel the recipe's glob matched; more would be wheels the
  // finisher never checked, so they fail the build rather than pass as the last one.
  const farm::v1::OutputFile* wheel = nullptr;
  std::vector<std::string> wheels;
  for (const auto& out : st->result().outputs()) {
    if (!absl::StartsWith(out.path(), "wheel/")) continue;
    wheel = &out;
    wheels.push_back(absl::CHexEscape(out.path()));
  }
  if (wheels.size() > 1) {
    builds_
        ->SetState(id, farm::v1::BUILD_STATE_FAILED,
                   absl::StrCat("the build host returned ", wheels.size(), " wheels (",
                                absl::StrJoin(wheels, ", "), "); a build publishes exactly one"))
        .IgnoreError();
    return;
  }
  std::optional<std::string> path;
  if (wheel != nullptr) {
    blobs_->Pin(id, {wheel->digest()});
    if (auto p = blobs_->PathOf(wheel->digest()); p.ok()) path = *p;
  }
  if (!path) {
    builds_
        ->SetState(id, farm::v1::BUILD_STATE_FAILED,
                   "the build host reported success but its wheel is not in the CAS")
        .IgnoreError();
    blobs_->Unpin(id);
    return;
  }
  const std::string filename = wheel->path().substr(std::string("wheel/").size());
  if (absl::Status s = finisher_->Finish(id, build->plan(), *path, filename); !s.ok()) {
    log->warn("build {}: {}", id, s.message());
  }
  blobs_->Unpin(id);
}

}  // namespace farm::coordinator
