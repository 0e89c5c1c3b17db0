#include "coordinator/wheels/wheel_pipeline.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "coordinator/wheels/build_dependencies.h"
#include "coordinator/wheels/build_planner.h"
#include "coordinator/wheels/source_tree.h"
#include "coordinator/wheels/source_uploads.h"
#include "coordinator/wheels/wheel_name_conflict.h"
#include "libfarm/auth/token.h"
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
        finisher_->ResumeSmoke(b);
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

struct WheelPipeline::Member {
  std::string ref;  // "demo-0.1.0", as submitted
  PlannedBuild planned;
  std::vector<farm::v1::InputFile> inputs;  // the uploaded or ingested source tree
  // `farmctl submit --source`: the tree or archive sent replaces the recipe's source of any
  // kind (a maintainer's checkout of a git or PyPI recipe, a release archive at hand).
  bool uploaded = false;
  bool uploaded_archive = false;  // `inputs` is the archive, which the build host unpacks
  ResolvedDependencies dependencies;
};

void WheelPipeline::SetIndexUrl(const std::string& url) {
  absl::MutexLock lock(&mu_);
  index_url_ = url;
}

std::string WheelPipeline::IndexUrl() {
  absl::MutexLock lock(&mu_);
  return index_url_;
}

absl::StatusOr<WheelPipeline::Member> WheelPipeline::PlanMember(
    const std::string& ref, const farm::v1::SubmitBuildRequest& request,
    const farm::v1::SourceUpload* upload, const std::vector<Member>& earlier,
    const std::vector<farm::v1::Build>& builds) {
  auto planned = PlanWheelBuild(ref, request.archs(), *recipes_, workers_->ListOnline(),
                                {.cpu_arch = request.cpu_arch(),
                                 .glibc_max = request.glibc_max(),
                                 .python = request.python(),
                                 .placement = scheduler_->placement()});
  if (!planned.ok()) return planned.status();
  Member member{.ref = ref, .planned = std::move(*planned)};
  DependencySources sources{
      .builds = &builds, .index_served = !IndexUrl().empty(), .recipes = recipes_, .ref = ref};
  for (const Member& m : earlier) sources.stack.push_back({.ref = m.ref, .plan = m.planned.plan});
  FARM_ASSIGN_OR_RETURN(member.dependencies, ResolveBuildDependencies(member.planned, sources));
  farm::v1::BuildPlan& plan = member.planned.plan;
  // The recipe's [smoke], run between verifying and publishing (smoke_stage.h).
  if (const auto proto = RecipeToProto(*member.planned.recipe); proto.has_smoke()) {
    *plan.mutable_smoke() = proto.smoke();
  }

  const RecipeSource& source = member.planned.version->source;
  if (upload != nullptr && upload->has_archive()) {
    FARM_ASSIGN_OR_RETURN(CheckedArchive archive,
                          CheckUploadedArchive(upload->archive(), *member.planned.recipe,
                                               *member.planned.version, blobs_));
    plan.set_source(DescribeUploadedArchive(archive, *member.planned.version,
                                            DescribeSource(*member.planned.version)));
    member.inputs = {std::move(archive.input)};
    member.uploaded = true;
    member.uploaded_archive = true;
  } else if (upload != nullptr) {
    FARM_ASSIGN_OR_RETURN(
        member.inputs,
        CheckUploadedSource({upload->files().begin(), upload->files().end()}, blobs_));
    member.uploaded = true;
    plan.set_source(absl::StrCat("upload of ", member.inputs.size(), " files",
                                 source.kind == RecipeSource::Kind::kUpload
                                     ? ""
                                     : absl::StrCat(" (--source, in place of ",
                                                    DescribeSource(*member.planned.version), ")")));
  } else if (source.kind == RecipeSource::Kind::kUpload) {
    if (source.default_dir.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("recipe '", member.planned.recipe->name,
                       "' builds an uploaded tree and names no default. Fix: pass --source DIR"));
    }
    if (!request.dry_run()) {
      FARM_ASSIGN_OR_RETURN(member.inputs, IngestSourceTree(source.default_dir, blobs_));
    }
  }
  plan.set_source_files(static_cast<uint32_t>(member.inputs.size()));
  if (!member.inputs.empty()) plan.set_source_digest(SourceTreeDigest(member.inputs));
  // Once the source is what this build reads (--source included): the same source again is
  // the same build, not a conflict.
  FARM_RETURN_IF_ERROR(CheckWheelNameIsFree(plan, builds));
  return member;
}

absl::StatusOr<farm::v1::Build> WheelPipeline::Queue(Member& member,
                                                     const farm::v1::Submitter& submitted_by,
                                                     const std::string& stack_id,
                                                     const std::vector<std::string>& depends_on) {
  const PlannedBuild& planned = member.planned;
  const farm::v1::BuildPlan& plan = planned.plan;
  farm::v1::Action action;
  farm::v1::WheelBuildTask* task = action.mutable_wheel_build();
  *task->mutable_recipe() = RecipeToProto(*planned.recipe);
  task->mutable_recipe()->set_python(planned.python);
  task->set_version(plan.version());
  task->set_archs(plan.archs());
  task->set_cuda_version(plan.cuda_version());
  uint32_t farm_slots = 0;
  for (const auto& w : workers_->ListOnline()) farm_slots += w.capabilities().slots();
  task->set_farm_slots(farm_slots);
  *task->mutable_source() =
      task->recipe()
          .versions(static_cast<int>(planned.version - planned.recipe->versions.data()))
          .source();
  if (member.uploaded) {  // the worker builds the inputs: no clone, no fetch
    task->mutable_source()->Clear();
    // An archive without a URL: the worker unpacks the one among the inputs, offline.
    task->mutable_source()->set_kind(RecipeSource{.kind = member.uploaded_archive
                                                              ? RecipeSource::Kind::kArchive
                                                              : RecipeSource::Kind::kUpload}
                                         .KindName());
  }
  for (const auto& wheel : member.dependencies.farm_wheels) *task->add_farm_wheels() = wheel;
  for (auto& in : member.inputs) *action.add_inputs() = std::move(in);
  *action.mutable_requirements() = planned.host_requirements;
  action.set_timeout_seconds(kBuildTimeoutSeconds);
  action.set_shard(kHostShard);
  action.set_skip_cache(true);  // the host's own work reruns; its device compiles are cached

  WheelBuildSpec spec{.package = plan.package(),
                      .version = plan.version(),
                      .plan = plan,
                      .submitted_by = submitted_by,
                      .stack_id = stack_id,
                      .depends_on = depends_on};
  for (const auto& shard : plan.shards()) spec.archs.push_back(shard.name());
  if (!depends_on.empty()) spec.waiting_action = action;
  auto build = builds_->CreateWheelBuild(spec);
  if (!build.ok()) return build.status();
  if (depends_on.empty()) {
    FARM_RETURN_IF_ERROR(QueueHostAction(build->id(), std::move(action), plan));
  } else {
    std::vector<std::string> names;
    for (const auto& d : plan.build_dependencies()) {
      if (d.source() == "stack") names.push_back(d.stack_recipe());
    }
    builds_
        ->AppendLog(
            build->id(),
            absl::StrCat("wheelfarm: waiting for this stack's ", absl::StrJoin(names, ", "),
                         " to be published (builds ", absl::StrJoin(depends_on, ", "), ")\n"))
        .IgnoreError();
  }
  {
    absl::MutexLock lock(&mu_);
    active_.insert(build->id());
  }
  return builds_->Get(build->id());
}

absl::Status WheelPipeline::QueueHostAction(const std::string& id, farm::v1::Action action,
                                            const farm::v1::BuildPlan& plan) {
  action.set_build_id(id);
  // Where the build host installs farm wheels from, as the coordinator is reached now.
  if (action.wheel_build().farm_wheels_size() > 0) {
    action.mutable_wheel_build()->set_farm_index_url(IndexUrl());
  }
  auto statuses = scheduler_->Execute({action});
  if (!statuses.ok()) {
    builds_
        ->SetState(id, farm::v1::BUILD_STATE_FAILED,
                   absl::StrCat("could not queue the build: ", statuses.status().message()))
        .IgnoreError();
    return statuses.status();
  }
  FARM_RETURN_IF_ERROR(builds_->SetBuildAction(id, statuses->front().action_id()));
  builds_
      ->AppendLog(id,
                  absl::StrCat("wheelfarm: queued ", plan.package(), " ", plan.version(), " for ",
                               plan.archs(), " with CUDA ", plan.cuda_version(),
                               "; build hosts: ", absl::StrJoin(plan.build_hosts(), ", "), "\n"))
      .IgnoreError();
  return absl::OkStatus();
}

absl::StatusOr<farm::v1::SubmitBuildResponse> WheelPipeline::Submit(
    const farm::v1::SubmitBuildRequest& request, const farm::v1::Submitter& submitted_by) {
  if (request.stack_size() > 0) return SubmitStack(request, submitted_by);
  FARM_ASSIGN_OR_RETURN(const auto uploads, SourceUploadsByRecipe(request, {request.recipe()}));
  FARM_ASSIGN_OR_RETURN(
      Member member,
      PlanMember(request.recipe(), request, uploads.empty() ? nullptr : &uploads.begin()->second,
                 {}, builds_->List(0)));
  farm::v1::SubmitBuildResponse response;
  *response.mutable_plan() = member.planned.plan;
  if (request.dry_run()) return response;
  FARM_ASSIGN_OR_RETURN(*response.mutable_build(), Queue(member, submitted_by, "", {}));
  return response;
}

absl::StatusOr<farm::v1::SubmitBuildResponse> WheelPipeline::SubmitStack(
    const farm::v1::SubmitBuildRequest& request, const farm::v1::Submitter& submitted_by) {
  if (!request.recipe().empty()) {
    return absl::InvalidArgumentError(
        "a stack names its packages in `stack` only, not in `recipe`. Fix: list every package "
        "in `stack` (farmctl submit does)");
  }
  const std::vector<std::string> refs(request.stack().begin(), request.stack().end());
  // Each package's --source NAME=PATH, checked against the stack before anything is planned.
  FARM_ASSIGN_OR_RETURN(const auto uploads, SourceUploadsByRecipe(request, refs));
  // Each package once; the order comes from what each installs from the others.
  struct Known {
    std::string ref;
    const Recipe* recipe = nullptr;
    std::string version;
  };
  std::vector<Known> known;
  for (const std::string& ref : refs) {
    Known k{.ref = ref};
    for (const Known& other : known) {
      if (other.ref == ref) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the stack names ", ref, " twice; each package is built once. Fix: name it once"));
      }
    }
    if (auto parsed = ParseRecipeRef(ref); parsed.ok()) {
      for (const Recipe& r : recipes_->recipes) {
        if (r.name == parsed->name) k.recipe = &r;
      }
      k.version = parsed->version;
    }
    known.push_back(k);
  }
  auto depends = [&](const Known& a, const Known& b) {  // a installs b's wheel
    if (a.recipe == nullptr || b.recipe == nullptr) return false;
    return std::any_of(a.recipe->farm_requirements.begin(), a.recipe->farm_requirements.end(),
                       [&](const FarmRequirement& r) {
                         return FarmRequirementMatches(r, b.recipe->package, b.version);
                       });
  };
  std::vector<size_t> order;
  std::vector<bool> placed(known.size(), false);
  while (order.size() < known.size()) {
    bool progress = false;
    for (size_t i = 0; i < known.size(); ++i) {
      if (placed[i]) continue;
      bool ready = true;
      for (size_t j = 0; j < known.size(); ++j) {
        if (j != i && !placed[j] && depends(known[i], known[j])) ready = false;
      }
      if (!ready) continue;
      placed[i] = true;
      order.push_back(i);
      progress = true;
      break;  // the first ready one in the order given, then look again from the start
    }
    if (!progress) {
      std::vector<std::string> cycle;
      for (size_t i = 0; i < known.size(); ++i) {
        if (!placed[i]) cycle.push_back(known[i].ref);
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "the stack's packages ", absl::StrJoin(cycle, ", "),
          " install each other's wheels (farm_requirements form a cycle), so none can be built "
          "first. Fix: drop the cycle from their recipes' farm_requirements"));
    }
  }
  // Planned whole before anything is queued: one refusal refuses the stack.
  const std::vector<farm::v1::Build> builds = builds_->List(0);
  std::vector<Member> members;
  for (size_t i : order) {
    const farm::v1::SourceUpload* upload = nullptr;
    if (known[i].recipe != nullptr) {
      if (auto it = uploads.find(known[i].recipe->name); it != uploads.end()) upload = &it->second;
    }
    auto member = PlanMember(known[i].ref, request, upload, members, builds);
    if (!member.ok()) {
      return absl::Status(member.status().code(),
                          absl::StrCat(known[i].ref, ": ", member.status().message(),
                                       " (nothing of the stack was queued)"));
    }
    for (const Member& m : members) {
      if (m.planned.plan.package() == member->planned.plan.package() &&
          m.planned.plan.version() == member->planned.plan.version()) {
        return absl::InvalidArgumentError(absl::StrCat(
            m.ref, " and ", known[i].ref, " both build ", m.planned.plan.package(), " ",
            m.planned.plan.version(), "; a stack builds each package once. Fix: keep one"));
      }
    }
    members.push_back(std::move(*member));
  }
  farm::v1::SubmitBuildResponse response;
  if (request.dry_run()) {
    for (const Member& m : members) *response.add_stack()->mutable_plan() = m.planned.plan;
    return response;
  }
  auto suffix = RandomHex(4);
  if (!suffix.ok()) return suffix.status();
  const std::string stack_id = absl::StrCat("stack-", *suffix);
  response.set_stack_id(stack_id);
  std::vector<std::string> ids;
  for (Member& m : members) {
    std::vector<std::string> depends_on;
    for (size_t index : m.dependencies.stack_indexes) depends_on.push_back(ids.at(index));
    farm::v1::StackMember* out = response.add_stack();
    *out->mutable_plan() = m.planned.plan;
    auto build = Queue(m, submitted_by, stack_id, depends_on);
    if (!build.ok()) return build.status();
    ids.push_back(build->id());
    *out->mutable_build() = *build;
  }
  ComponentLogger("coordinator")
      ->info("stack {}: {} builds queued ({})", stack_id, ids.size(), absl::StrJoin(ids, ", "));
  return response;
}

void WheelPipeline::StartWhenReady(const farm::v1::Build& build) {
  std::vector<std::string> waiting;
  for (const std::string& dep_id : build.depends_on()) {
    auto dep = builds_->Get(dep_id);
    if (dep.ok() && dep->state() == farm::v1::BUILD_STATE_SUCCEEDED) continue;
    if (dep.ok() && !IsTerminalBuildState(dep->state())) {
      waiting.push_back(dep_id);
      continue;
    }
    const std::string what = dep.ok()
                                 ? absl::StrCat(dep->package(), " ", dep->version(), " (build ",
                                                dep_id, ") ", BuildStateName(dep->state()))
                                 : absl::StrCat("build ", dep_id, " is gone");
    const std::string reason = absl::StrCat(
        "not built: its dependency ", what,
        dep.ok() && !dep->reason().empty() ? absl::StrCat(": ", TailLines(dep->reason(), 1)) : "");
    builds_->AppendLog(build.id(), absl::StrCat("wheelfarm: ", reason, "\n")).IgnoreError();
    builds_->SetState(build.id(), farm::v1::BUILD_STATE_FAILED, reason).IgnoreError();
    return;
  }
  if (!waiting.empty()) return;
  auto action = builds_->WaitingAction(build.id());
  if (!action.ok()) {
    builds_
        ->SetState(build.id(), farm::v1::BUILD_STATE_FAILED,
                   absl::StrCat("its host action is gone: ", action.status().message()))
        .IgnoreError();
    return;
  }
  builds_
      ->AppendLog(build.id(), absl::StrCat("wheelfarm: its dependencies are published (builds ",
                                           absl::StrJoin(build.depends_on(), ", "), ")\n"))
      .IgnoreError();
  if (absl::Status s = QueueHostAction(build.id(), *std::move(action), build.plan()); !s.ok()) {
    ComponentLogger("coordinator")->warn("build {}: {}", build.id(), s.message());
  }
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
  // Before the actions are cancelled: no smoke test is queued for it after this.
  finisher_->CancelSmoke(build_id);
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
  if (!finished && build->build_action_id().empty() && !build->depends_on().empty()) {
    StartWhenReady(*build);
    return;
  }
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
