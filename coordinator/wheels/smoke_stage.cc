#include "coordinator/wheels/smoke_stage.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "libfarm/builds/build_state.h"
#include "libfarm/cuda/arch_compat.h"
#include "libfarm/gpu/gpu_device.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/output_tail.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/time/proto_time.h"

namespace farm::coordinator {
namespace {

// A smoke test installs a wheel and runs a few kernels; a stuck one must not hold a GPU worker
// for the day the scheduler allows.
constexpr uint32_t kSmokeTimeoutSeconds = 1800;
constexpr int kOutputLines = 40;

bool Terminal(const farm::v1::SmokeResult& r) {
  return r.state() == kSmokePassed || r.state() == kSmokeFailed || r.state() == kSmokeNotRun;
}

bool HasPython(const farm::v1::Worker& w, const std::string& python) {
  const auto& p = w.capabilities().python();
  return python.empty() ||
         std::any_of(p.begin(), p.end(), [&](const auto& i) { return i.version() == python; });
}

}  // namespace

std::vector<farm::v1::SmokeResult> PlaceSmokeTests(const ArchList& archs,
                                                   const std::vector<farm::v1::Worker>& online,
                                                   const std::string& python,
                                                   const std::string& cpu_arch, bool wait_for_gpu) {
  // The GPU SMs of the workers that could install the wheel, and every GPU seen (for reasons).
  std::set<int> usable;
  std::set<std::string> seen;
  for (const auto& w : online) {
    for (const auto& gpu : w.capabilities().gpus()) {
      seen.insert(absl::StrCat(gpu.sm(), " on ", w.name()));
      const bool fits =
          HasPython(w, python) && (cpu_arch.empty() || w.capabilities().cpu_arch() == cpu_arch);
      if (auto sm = GpuSm(gpu.sm()); sm.ok() && fits) usable.insert(*sm);
    }
  }
  std::vector<farm::v1::SmokeResult> out;
  for (const ArchRequest& r : archs.requests) {
    farm::v1::SmokeResult result;
    result.set_sm(r.target.SmName());
    std::optional<int> chosen;
    if (SassRunsOn(r.target, r.target.sm) && usable.count(r.target.sm)) chosen = r.target.sm;
    for (int gpu : usable) {
      if (chosen) break;
      if (SassRunsOn(r.target, gpu) || (r.ptx && PtxRunsOn(r.target, gpu))) chosen = gpu;
    }
    const std::string worker =
        absl::StrCat("GPU worker", python.empty() ? "" : absl::StrCat(" with python", python),
                     cpu_arch.empty() ? "" : absl::StrCat(" on ", cpu_arch));
    const std::string gpus =
        seen.empty() ? "no GPU online" : absl::StrCat("GPUs online: ", absl::StrJoin(seen, ", "));
    if (chosen) {
      result.set_state(kSmokeQueued);
      result.set_gpu_sm(absl::StrCat("sm_", *chosen));
    } else if (wait_for_gpu) {
      result.set_state(kSmokeWaiting);
      result.set_reason(absl::StrCat("waiting for a ", worker, " that runs ", r.target.SmName(),
                                     " (none online; ", gpus, ")"));
    } else {
      result.set_state(kSmokeNotRun);
      result.set_reason(
          absl::StrCat("no online ", worker, " runs ", r.target.SmName(), " (", gpus, ")"));
    }
    out.push_back(std::move(result));
  }
  return out;
}

absl::Duration GpuWait(const farm::v1::RecipeSmoke& smoke) {
  return smoke.gpu_wait_seconds() > 0 ? absl::Seconds(smoke.gpu_wait_seconds()) : kDefaultGpuWait;
}

bool EndOverdueWait(const farm::v1::RecipeSmoke& smoke, absl::Time now,
                    farm::v1::SmokeResult* result) {
  if (result->state() != kSmokeWaiting) return false;
  const absl::Duration wait = GpuWait(smoke);
  if (now - FromProtoTime(result->waiting_since()) < wait) return false;
  // "waiting for a GPU worker ... that runs sm_75 (none online; GPUs online: ...)"
  std::string what = result->reason();
  if (absl::StartsWith(what, "waiting for ")) what = what.substr(std::string("waiting ").size());
  result->set_state(kSmokeNotRun);
  result->set_reason(absl::StrCat("waited ", absl::FormatDuration(wait), " (the recipe's [smoke] ",
                                  smoke.gpu_wait_seconds() > 0 ? "gpu_wait" : "default gpu_wait",
                                  ") ", what));
  return true;
}

absl::Status SmokeVerdict(const farm::v1::RecipeSmoke& smoke,
                          const std::vector<farm::v1::SmokeResult>& results,
                          std::vector<std::string>* marked) {
  std::vector<std::string> blocking;
  std::vector<std::string> untested;  // with require_gpu
  for (const auto& r : results) {
    if (r.state() == kSmokeFailed) {
      std::string what = absl::StrCat("the smoke test failed on ", r.sm(),
                                      r.worker().empty() ? "" : absl::StrCat(" (", r.worker(), ")"),
                                      ": ", r.reason());
      (smoke.on_failure() == "mark" ? *marked : blocking).push_back(std::move(what));
    } else if (r.state() == kSmokeNotRun) {
      std::string what = absl::StrCat(r.sm(), " was not smoke-tested: ", r.reason());
      (smoke.require_gpu() ? blocking : *marked).push_back(std::move(what));
      if (smoke.require_gpu()) untested.push_back(r.sm());
    }
  }
  if (blocking.empty()) return absl::OkStatus();
  std::string fix;
  if (!untested.empty()) {
    std::vector<std::string> flags;
    for (const auto& sm : untested) flags.push_back(absl::StrCat("--gpu ", sm));
    fix = absl::StrCat(
        " (the recipe's [smoke] has require_gpu = true). Fix: bring a GPU worker "
        "that runs ",
        absl::StrJoin(untested, ", "), " online (farm-worker ", absl::StrJoin(flags, " "),
        ") and submit again, or set require_gpu = false in the recipe's [smoke]");
  }
  return absl::FailedPreconditionError(absl::StrCat(absl::StrJoin(blocking, "; "), fix));
}

std::string SmokeSummary(const google::protobuf::RepeatedPtrField<farm::v1::SmokeResult>& results) {
  std::vector<std::string> parts;
  for (const auto& r : results) {
    if (r.state() == kSmokeWaiting) {  // "sm_75 waiting for a GPU worker that runs sm_75 (...)"
      parts.push_back(absl::StrCat(r.sm(), " ", r.reason()));
      continue;
    }
    std::string part = absl::StrCat(r.sm(), " ", r.state());
    if (!r.worker().empty()) absl::StrAppend(&part, " on ", r.worker());
    if (!r.gpu_sm().empty() && r.gpu_sm() != r.sm())
      absl::StrAppend(&part, " (", r.gpu_sm(), " GPU)");
    if (r.state() == kSmokeNotRun && !r.reason().empty()) absl::StrAppend(&part, ": ", r.reason());
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, "; ");
}

std::string SmokeStage::WaitingSms(
    const google::protobuf::RepeatedPtrField<farm::v1::SmokeResult>& results) {
  std::vector<std::string> sms;
  for (const auto& r : results) {
    if (r.state() == kSmokeWaiting) sms.push_back(r.sm());
  }
  return absl::StrJoin(sms, ", ");
}

SmokeStage::SmokeStage(BuildRegistry* builds, Scheduler* scheduler, WorkerRegistry* workers,
                       std::function<std::string()> index_url, std::function<absl::Time()> clock)
    : builds_(builds),
      scheduler_(scheduler),
      workers_(workers),
      index_url_(std::move(index_url)),
      clock_(std::move(clock)) {}

absl::Status SmokeStage::Start(const std::string& id, const farm::v1::BuildPlan& plan,
                               const farm::v1::Digest& wheel, const std::string& filename) {
  FARM_ASSIGN_OR_RETURN(ArchList archs, ParseArchList(plan.archs()));
  std::vector<farm::v1::SmokeResult> results =
      PlaceSmokeTests(archs, workers_->ListOnline(), plan.python_version(), plan.cpu_arch(),
                      plan.smoke().require_gpu());
  for (auto& r : results) Begin(id, plan, wheel, filename, r);
  return builds_->SetSmoke(id, results);
}

void SmokeStage::Begin(const std::string& id, const farm::v1::BuildPlan& plan,
                       const farm::v1::Digest& wheel, const std::string& filename,
                       farm::v1::SmokeResult& r) {
  if (r.state() == kSmokeQueued) {
    Queue(id, plan, wheel, filename, r);
  } else if (r.state() == kSmokeWaiting) {
    *r.mutable_waiting_since() = ToProtoTime(clock_());
    builds_
        ->AppendLog(id,
                    absl::StrCat("wheelfarm: smoke test ", r.sm(), ": ", r.reason(),
                                 "; it waits up to ", absl::FormatDuration(GpuWait(plan.smoke())),
                                 " (the recipe's [smoke] has require_gpu = true)\n"))
        .IgnoreError();
  } else {
    builds_
        ->AppendLog(id,
                    absl::StrCat("wheelfarm: smoke test ", r.sm(), ": not run: ", r.reason(), "\n"))
        .IgnoreError();
  }
}

void SmokeStage::PlaceAgain(const farm::v1::Build& build, farm::v1::SmokeResult& r,
                            const absl::Status& gone) {
  builds_
      ->AppendLog(build.id(),
                  absl::StrCat("wheelfarm: smoke test ", r.sm(), ": its action is gone (",
                               gone.message(), "); the test is placed again\n"))
      .IgnoreError();
  auto archs = ParseArchList(build.plan().archs());
  if (!archs.ok()) return;  // Start parsed them: this does not happen
  const std::vector<farm::v1::SmokeResult> placed =
      PlaceSmokeTests(*archs, workers_->ListOnline(), build.plan().python_version(),
                      build.plan().cpu_arch(), build.plan().smoke().require_gpu());
  auto p = std::find_if(placed.begin(), placed.end(),
                        [&](const farm::v1::SmokeResult& x) { return x.sm() == r.sm(); });
  if (p == placed.end()) return;
  r = *p;
  farm::v1::Digest wheel;
  wheel.set_hash(build.wheel().sha256());
  wheel.set_size_bytes(static_cast<int64_t>(build.wheel().size_bytes()));
  Begin(build.id(), build.plan(), wheel, build.wheel().filename(), r);
}

void SmokeStage::Queue(const std::string& id, const farm::v1::BuildPlan& plan,
                       const farm::v1::Digest& wheel, const std::string& filename,
                       farm::v1::SmokeResult& r) {
  farm::v1::Action action;
  // Never run: the worker runs the smoke_test task. It names the test, and keeps the tests
  // of one wheel on several GPUs from being taken for one action.
  action.add_argv("wheelfarm-smoke-test");
  action.add_argv(r.sm());
  action.add_argv(r.gpu_sm());
  action.add_argv(filename);
  (*action.mutable_env())["FARM_BUILD_ID"] = id;
  (*action.mutable_env())["FARM_SMOKE_SM"] = r.gpu_sm();
  auto* input = action.add_inputs();
  input->set_path(absl::StrCat("wheel/", filename));
  *input->mutable_digest() = wheel;
  auto* req = action.mutable_requirements();
  req->set_gpu_sm(r.gpu_sm());
  req->set_python_version(plan.python_version());
  req->set_cpu_arch(plan.cpu_arch());
  action.set_timeout_seconds(kSmokeTimeoutSeconds);
  action.set_build_id(id);
  action.set_shard(absl::StrCat("smoke ", r.sm()));
  action.set_skip_cache(true);  // a test proves something only when it runs
  auto* task = action.mutable_smoke_test();
  *task->mutable_smoke() = plan.smoke();
  task->set_python(plan.python_version());
  task->set_wheel(input->path());
  task->set_sm(r.gpu_sm());
  task->set_index_url(index_url_ ? index_url_() : "");
  task->set_arch(r.sm());
  // Run dependencies for the toolkit the wheel was built with (nvidia-cudnn-cu13 ...).
  if (auto cuda = ParseToolkitVersion(plan.cuda_version()); cuda.ok()) {
    for (auto& req : *task->mutable_smoke()->mutable_requirements()) {
      req = absl::StrReplaceAll(req, {{"{cuda_major}", absl::StrCat(cuda->major)}});
    }
  }
  auto queued = scheduler_->Execute({action});
  if (!queued.ok() || queued->empty()) {
    r.set_state(kSmokeNotRun);
    r.set_reason(absl::StrCat("could not queue it: ",
                              queued.ok() ? "no status" : queued.status().message()));
    builds_
        ->AppendLog(id,
                    absl::StrCat("wheelfarm: smoke test ", r.sm(), ": not run: ", r.reason(), "\n"))
        .IgnoreError();
    return;
  }
  r.set_state(kSmokeQueued);
  r.set_reason("");
  r.set_action_id(queued->front().action_id());
  builds_
      ->AppendLog(id, absl::StrCat("wheelfarm: smoke test ", r.sm(), ": queued for a ", r.gpu_sm(),
                                   " GPU\n"))
      .IgnoreError();
}

absl::Status SmokeStage::EndWaits(const std::string& id, const std::string& why) {
  absl::MutexLock lock(&mu_);
  FARM_ASSIGN_OR_RETURN(farm::v1::Build build, builds_->Get(id));
  if (WaitingSms(build.smoke()).empty()) return absl::OkStatus();
  std::vector<farm::v1::SmokeResult> results(build.smoke().begin(), build.smoke().end());
  for (auto& r : results) {
    if (r.state() != kSmokeWaiting) continue;
    r.set_state(kSmokeNotRun);
    r.set_reason(why);
  }
  return builds_->SetSmoke(id, results);
}

// A waiting SM is placed again, by PlaceSmokeTests' rules, among the workers online now.
void SmokeStage::PlaceWaiting(const farm::v1::Build& build,
                              std::vector<farm::v1::SmokeResult>& results, bool* changed,
                              bool* done) {
  auto archs = ParseArchList(build.plan().archs());
  if (!archs.ok()) return;  // Start parsed them: this does not happen
  const std::vector<farm::v1::SmokeResult> placed =
      PlaceSmokeTests(*archs, workers_->ListOnline(), build.plan().python_version(),
                      build.plan().cpu_arch(), /*wait_for_gpu=*/true);
  farm::v1::Digest wheel;
  wheel.set_hash(build.wheel().sha256());
  wheel.set_size_bytes(static_cast<int64_t>(build.wheel().size_bytes()));
  const absl::Time now = clock_();
  for (auto& r : results) {
    if (r.state() != kSmokeWaiting) continue;
    auto p = std::find_if(placed.begin(), placed.end(),
                          [&](const farm::v1::SmokeResult& x) { return x.sm() == r.sm(); });
    if (p != placed.end() && p->state() == kSmokeQueued) {
      r.set_gpu_sm(p->gpu_sm());
      builds_
          ->AppendLog(build.id(),
                      absl::StrCat("wheelfarm: smoke test ", r.sm(),
                                   ": an online GPU worker runs it now, after ",
                                   absl::FormatDuration(absl::Trunc(
                                       now - FromProtoTime(r.waiting_since()), absl::Seconds(1))),
                                   " of waiting\n"))
          .IgnoreError();
      Queue(build.id(), build.plan(), wheel, build.wheel().filename(), r);
      *changed = true;
      continue;
    }
    // Still none: the reason follows the GPUs online, until the wait is over.
    if (p != placed.end() && p->reason() != r.reason()) {
      r.set_reason(p->reason());
      *changed = true;
    }
    if (EndOverdueWait(build.plan().smoke(), now, &r)) {
      builds_
          ->AppendLog(build.id(), absl::StrCat("wheelfarm: smoke test ", r.sm(),
                                               ": not run: ", r.reason(), "\n"))
          .IgnoreError();
      *changed = true;
      continue;
    }
    *done = false;
  }
}

absl::StatusOr<bool> SmokeStage::Advance(const std::string& id) {
  absl::MutexLock lock(&mu_);
  FARM_ASSIGN_OR_RETURN(farm::v1::Build build, builds_->Get(id));
  if (IsTerminalBuildState(build.state())) return false;  // cancelled meanwhile
  std::vector<farm::v1::SmokeResult> results(build.smoke().begin(), build.smoke().end());
  bool changed = false;
  bool done = true;
  if (!WaitingSms(build.smoke()).empty()) PlaceWaiting(build, results, &changed, &done);
  for (auto& r : results) {
    if (Terminal(r) || r.state() == kSmokeWaiting) continue;
    auto st = scheduler_->Get(r.action_id());
    if (absl::IsNotFound(st.status())) {
      // Its record left the store (lost across a restart): the test is placed again, as at
      // the start, rather than reported not run, which with require_gpu fails the build.
      PlaceAgain(build, r, st.status());
      changed = true;
      if (r.state() != kSmokeNotRun) done = false;
      continue;
    }
    if (!st.ok()) {  // the store could not be read: asked again next time
      done = false;
      continue;
    }
    switch (st->state()) {
      case farm::v1::ACTION_STATE_QUEUED:
        done = false;
        continue;
      case farm::v1::ACTION_STATE_RUNNING:
        done = false;
        if (r.state() != kSmokeRunning) {
          r.set_state(kSmokeRunning);
          r.set_worker(st->worker());
          changed = true;
        }
        continue;
      case farm::v1::ACTION_STATE_COMPLETED: {
        const auto& result = st->result();
        r.set_worker(result.worker());
        // The test's steps merge their output into stdout; stderr has the worker's own words.
        const std::string output = absl::StrCat(result.stdout_tail(), result.stderr_tail());
        r.set_output(TailLines(output, kOutputLines));
        if (result.exit_code() == 0) {
          r.set_state(kSmokePassed);
        } else {
          r.set_state(kSmokeFailed);
          r.set_reason(absl::StrCat("exit code ", result.exit_code(), ":\n", r.output()));
        }
        break;
      }
      case farm::v1::ACTION_STATE_CANCELLED:
        r.set_state(kSmokeNotRun);
        r.set_reason("its action was cancelled");
        break;
      default:
        r.set_state(kSmokeFailed);
        r.set_worker(st->worker());
        r.set_reason(absl::StrCat("it could not run: ", st->error()));
        break;
    }
    changed = true;
    builds_
        ->AppendLog(id, absl::StrCat("wheelfarm: smoke test ", r.sm(), " on ",
                                     r.worker().empty() ? "?" : r.worker(), " (", r.gpu_sm(),
                                     " GPU): ", r.state(), "\n", r.output(),
                                     r.output().empty() || r.output().back() == '\n' ? "" : "\n"))
        .IgnoreError();
  }
  if (changed) FARM_RETURN_IF_ERROR(builds_->SetSmoke(id, results));
  return done;
}

}  // namespace farm::coordinator
