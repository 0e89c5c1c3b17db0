#include "coordinator/wheels/smoke_stage.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "libfarm/cuda/arch_compat.h"
#include "libfarm/gpu/gpu_device.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/output_tail.h"
#include "libfarm/status/status_macros.h"

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
                                                   const std::string& cpu_arch) {
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
    if (chosen) {
      result.set_state(kSmokeQueued);
      result.set_gpu_sm(absl::StrCat("sm_", *chosen));
    } else {
      result.set_state(kSmokeNotRun);
      result.set_reason(absl::StrCat(
          "no online GPU worker", python.empty() ? "" : absl::StrCat(" with python", python),
          cpu_arch.empty() ? "" : absl::StrCat(" on ", cpu_arch), " runs ", r.target.SmName(),
          seen.empty() ? " (no GPU online)"
                       : absl::StrCat(" (GPUs online: ", absl::StrJoin(seen, ", "), ")")));
    }
    out.push_back(std::move(result));
  }
  return out;
}

absl::Status SmokeVerdict(const farm::v1::RecipeSmoke& smoke,
                          const std::vector<farm::v1::SmokeResult>& results,
                          std::vector<std::string>* marked) {
  std::vector<std::string> blocking;
  for (const auto& r : results) {
    if (r.state() == kSmokeFailed) {
      std::string what = absl::StrCat("the smoke test failed on ", r.sm(),
                                      r.worker().empty() ? "" : absl::StrCat(" (", r.worker(), ")"),
                                      ": ", r.reason());
      (smoke.on_failure() == "mark" ? *marked : blocking).push_back(std::move(what));
    } else if (r.state() == kSmokeNotRun) {
      std::string what = absl::StrCat(r.sm(), " was not smoke-tested: ", r.reason());
      (smoke.require_gpu() ? blocking : *marked).push_back(std::move(what));
    }
  }
  if (blocking.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      absl::StrJoin(blocking, "; "), smoke.require_gpu() ? " (the recipe's [smoke] has "
                                                           "require_gpu = true)"
                                                         : ""));
}

std::string SmokeSummary(const google::protobuf::RepeatedPtrField<farm::v1::SmokeResult>& results) {
  std::vector<std::string> parts;
  for (const auto& r : results) {
    std::string part = absl::StrCat(r.sm(), " ", r.state());
    if (!r.worker().empty()) absl::StrAppend(&part, " on ", r.worker());
    if (!r.gpu_sm().empty() && r.gpu_sm() != r.sm())
      absl::StrAppend(&part, " (", r.gpu_sm(), " GPU)");
    if (r.state() == kSmokeNotRun && !r.reason().empty()) absl::StrAppend(&part, ": ", r.reason());
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, "; ");
}

SmokeStage::SmokeStage(BuildRegistry* builds, Scheduler* scheduler, WorkerRegistry* workers,
                       std::function<std::string()> index_url)
    : builds_(builds), scheduler_(scheduler), workers_(workers), index_url_(std::move(index_url)) {}

absl::Status SmokeStage::Start(const std::string& id, const farm::v1::BuildPlan& plan,
                               const farm::v1::Digest& wheel, const std::string& filename) {
  FARM_ASSIGN_OR_RETURN(ArchList archs, ParseArchList(plan.archs()));
  std::vector<farm::v1::SmokeResult> results =
      PlaceSmokeTests(archs, workers_->ListOnline(), plan.python_version(), plan.cpu_arch());
  const std::string index = index_url_ ? index_url_() : "";
  for (auto& r : results) {
    if (r.state() != kSmokeQueued) {
      builds_
          ->AppendLog(
              id, absl::StrCat("wheelfarm: smoke test ", r.sm(), ": not run: ", r.reason(), "\n"))
          .IgnoreError();
      continue;
    }
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
    task->set_index_url(index);
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
      continue;
    }
    r.set_action_id(queued->front().action_id());
    builds_
        ->AppendLog(id, absl::StrCat("wheelfarm: smoke test ", r.sm(), ": queued for a ",
                                     r.gpu_sm(), " GPU\n"))
        .IgnoreError();
  }
  return builds_->SetSmoke(id, results);
}

absl::StatusOr<bool> SmokeStage::Advance(const std::string& id) {
  FARM_ASSIGN_OR_RETURN(farm::v1::Build build, builds_->Get(id));
  std::vector<farm::v1::SmokeResult> results(build.smoke().begin(), build.smoke().end());
  bool changed = false;
  bool done = true;
  for (auto& r : results) {
    if (Terminal(r)) continue;
    auto st = scheduler_->Get(r.action_id());
    if (!st.ok()) {
      r.set_state(kSmokeNotRun);
      r.set_reason(absl::StrCat("its action is gone: ", st.status().message()));
      changed = true;
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
