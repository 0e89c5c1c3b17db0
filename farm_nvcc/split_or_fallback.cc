#include "farm_nvcc/split_or_fallback.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "farm_nvcc/farm_compile.h"
#include "farm_nvcc/strict_mode.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/jobs/local_job_slot.h"
#include "libfarm/launcher/call_report.h"
#include "libfarm/launcher/fallback_reason.h"
#include "libfarm/launcher/strict_mode.h"
#include "libfarm/logging/logger.h"
#include "libfarm/nvcc/compile_and_link.h"
#include "libfarm/nvcc/private_temp_dir.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

void ReportCallOutcome(const FarmNvccConfig& options, farm::v1::NvccCallOutcome outcome,
                       farm::v1::FallbackReason code = farm::v1::FALLBACK_REASON_UNSPECIFIED,
                       const std::string& reason = "", const CompileCallTiming* timing = nullptr) {
  ReportCallOutcome(options.target, options.build_id, farm::v1::COMPILE_CALL_KIND_NVCC, outcome,
                    code, reason, timing);
}

// Runs plain nvcc for a call that could not be split, after reporting why (counted under the
// code `why` carries, else `code`); in strict mode (never for a compile error) refuses instead.
int Fallback(const NvccInvocation& call, const FarmNvccConfig& options,
             farm::v1::FallbackReason code, const absl::Status& why) {
  auto log = ComponentLogger("farm-nvcc");
  if (why.code() == absl::StatusCode::kAborted) {
    // A compile error: plain nvcc reports it in its own words, with its own exit code.
    log->debug("{}; running plain nvcc for its diagnostics", why.message());
    ReportCallOutcome(options, farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR);
    return ExecPlainNvcc(call, options.local_jobs);
  }
  const std::string reason(why.message());
  ReportCallOutcome(options, farm::v1::NVCC_CALL_OUTCOME_FALLBACK, FallbackReasonOf(why, code),
                    reason);
  if (options.strict) {
    std::cerr << StrictModeMessage(call, reason) << "\n";
    return kStrictExitCode;
  }
  log->info("running plain nvcc: {}", reason);
  return ExecPlainNvcc(call, options.local_jobs);
}

std::optional<LocalJobSlot> HeavySlot(const std::optional<LocalJobLimits>& local_jobs) {
  return LocalJobSlotIfUsable(local_jobs, JobClass::kHeavy, "farm-nvcc", "nvcc");
}

// Runs nvcc with `args` as a child that prints to our stdout and stderr, under a heavy slot;
// its exit code.
int RunNvcc(const std::string& nvcc, const std::vector<std::string>& args,
            const std::optional<LocalJobLimits>& local_jobs) {
  std::vector<std::string> argv = {nvcc};
  argv.insert(argv.end(), args.begin(), args.end());
  std::optional<LocalJobSlot> slot = HeavySlot(local_jobs);
  SpawnOptions spawn;
  if (slot && slot->held()) spawn.extra_env.push_back(slot->ChildEnvironmentEntry());
  auto child = Subprocess::Spawn(argv, spawn);
  if (!child.ok()) {
    std::cerr << "farm-nvcc: " << child.status().message() << "\n";
    return 127;
  }
  return child->Wait(absl::InfiniteDuration()).value_or(127);
}

}  // namespace

int ExecPlainNvcc(const NvccInvocation& call, const std::optional<LocalJobLimits>& local_jobs) {
  std::vector<std::string> argv = {call.nvcc};
  argv.insert(argv.end(), call.args.begin(), call.args.end());
  // nvcc inherits the slot's lock, so it holds the slot until it ends; its own children are
  // told so (a farm-cc under -ccbin then takes none).
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  std::optional<LocalJobSlot> slot = HeavySlot(local_jobs);
  if (slot && slot->held()) {
    if (absl::Status s = slot->KeepAcrossExec(); s.ok()) {
      env.push_back(slot->ChildEnvironmentEntry());
    } else {
      ComponentLogger("farm-nvcc")->warn("running nvcc without a job slot: {}", s.message());
    }
  }
  std::vector<char*> pointers = NullTerminatedPointers(argv);
  std::vector<char*> env_pointers = NullTerminatedPointers(env);
  execve(call.nvcc.c_str(), pointers.data(), env_pointers.data());
  std::cerr << "farm-nvcc: cannot run " << call.nvcc << ": " << std::strerror(errno) << "\n";
  return 127;
}

int SplitOrFallback(const NvccInvocation& call, const FarmNvccConfig& options) {
  if (options.disabled) {
    return Fallback(call, options, farm::v1::FALLBACK_REASON_DISABLED,
                    absl::CancelledError("FARM_NVCC_DISABLE=1"));
  }
  auto command = ParseNvccCommandLine(call.args);
  if (!command.ok())
    return Fallback(call, options, farm::v1::FALLBACK_REASON_COMMAND_LINE, command.status());
  // A call that also links compiles each .cu on the farm into an object of ours, then links.
  std::optional<PrivateTempDir> objects;
  std::optional<CompileAndLink> plan;
  // Plain nvcc replaces this process: the objects' directory goes first.
  auto fall_back = [&](farm::v1::FallbackReason code, const absl::Status& why) {
    objects.reset();
    return Fallback(call, options, code, why);
  };
  if (CompilesAndLinks(*command)) {
    auto dir = PrivateTempDir::Create();
    if (!dir.ok()) return fall_back(farm::v1::FALLBACK_REASON_LOCAL_ERROR, dir.status());
    objects.emplace(*std::move(dir));
    auto planned = PlanCompileAndLink(*command, objects->path());
    if (!planned.ok()) return fall_back(farm::v1::FALLBACK_REASON_COMMAND_LINE, planned.status());
    plan = *std::move(planned);
  } else if (absl::Status s = CheckDecomposable(*command); !s.ok()) {
    return fall_back(farm::v1::FALLBACK_REASON_COMMAND_LINE, s);
  }
  for (const char* variable : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"}) {
    const std::string value = GetEnv(variable);
    if (value.empty()) continue;
    if (absl::Status s = CheckEnvironmentFlags(variable, value); !s.ok()) {
      return fall_back(farm::v1::FALLBACK_REASON_ENVIRONMENT, s);
    }
  }

  auto target = ResolveCoordinatorTarget(options.target);
  if (!target.ok()) return fall_back(farm::v1::FALLBACK_REASON_NO_COORDINATOR, target.status());

  // A farm that is down must cost a build little: few, short retries.
  CasClientOptions cas_options;
  cas_options.max_attempts = 2;
  cas_options.initial_backoff = absl::Milliseconds(100);
  auto cas = CasClient::Connect(target->address, target->token, cas_options, target->channel);
  auto actions = ActionClient::Connect(target->address, target->token, target->channel);
  FarmCompile farm(actions.get(), cas.get(), options);

  if (!plan) {
    auto outcome = farm.Compile(call.nvcc, *command);
    if (!outcome.ok()) return fall_back(farm::v1::FALLBACK_REASON_FARM_ERROR, outcome.status());
    ReportCallOutcome(options, *outcome, farm::v1::FALLBACK_REASON_UNSPECIFIED, "", &farm.timing());
    return 0;
  }
  auto outcome = farm::v1::NVCC_CALL_OUTCOME_CACHED;
  for (const NvccCommandLine& compile : plan->compiles) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(compile.output).parent_path(), ec);
    auto compiled = farm.Compile(call.nvcc, compile);
    if (!compiled.ok()) return fall_back(farm::v1::FALLBACK_REASON_FARM_ERROR, compiled.status());
    if (*compiled == farm::v1::NVCC_CALL_OUTCOME_SPLIT) outcome = *compiled;
  }
  ComponentLogger("farm-nvcc")
      ->debug("{} .cu compiled on the farm; nvcc links here", plan->compiles.size());
  const int link = RunNvcc(call.nvcc, plan->link_args, options.local_jobs);
  // A link that fails is the user's to fix (nvcc said why), as a compile error is.
  if (link != 0) {
    ReportCallOutcome(options, farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR);
    return link;
  }
  ReportCallOutcome(options, outcome, farm::v1::FALLBACK_REASON_UNSPECIFIED, "", &farm.timing());
  return link;
}

}  // namespace farm
