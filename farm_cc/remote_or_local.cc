#include "farm_cc/remote_or_local.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "farm_cc/farm_host_compile.h"
#include "farm_cc/scan_cache.h"
#include "farm_cc/search_list_cache.h"
#include "libfarm/actions/call_phases.h"
#include "libfarm/cc/dependency_scan.h"
#include "libfarm/cc/file_facts_cache.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/jobs/local_job_slot.h"
#include "libfarm/launcher/call_report.h"
#include "libfarm/launcher/fallback_reason.h"
#include "libfarm/launcher/strict_mode.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

void Report(const FarmCcConfig& options, farm::v1::NvccCallOutcome outcome,
            farm::v1::FallbackReason code = farm::v1::FALLBACK_REASON_UNSPECIFIED,
            const std::string& reason = "", const CompileCallTiming* timing = nullptr) {
  ReportCallOutcome(options.target, options.build_id, farm::v1::COMPILE_CALL_KIND_HOST, outcome,
                    code, reason, timing);
}

// The local compiler as a child printing to our stdout and stderr, under a heavy job slot;
// its exit code.
int RunLocally(const CcInvocation& call, const FarmCcConfig& options) {
  std::vector<std::string> argv = {call.compiler};
  argv.insert(argv.end(), call.args.begin(), call.args.end());
  std::optional<LocalJobSlot> slot = LocalJobSlotIfUsable(
      options.local_jobs, JobClass::kHeavy, "farm-cc", call.compiler, options.local_job_priority);
  SpawnOptions spawn;
  if (slot && slot->held()) spawn.extra_env.push_back(slot->ChildEnvironmentEntry());
  auto child = Subprocess::Spawn(argv, spawn);
  if (!child.ok()) {
    std::cerr << "farm-cc: " << child.status().message() << "\n";
    return 127;
  }
  return child->Wait(absl::InfiniteDuration()).value_or(127);
}

std::string Source(const CcInvocation& call) {
  auto plan = cc::PlanRemoteCompile(call.args, cc::CompilerFamily::kGcc);
  return plan.ok() ? plan->source : "the call";
}

// Strict mode is about compiles: links, preprocessing and the driver's queries (CMake's
// compiler checks) run here by nature.
bool IsCompile(const CcInvocation& call) {
  return std::find(call.args.begin(), call.args.end(), "-c") != call.args.end();
}

// How a compile call ended, before it is reported: on the farm, a compile error, or here (a
// fallback, with its code and text). RemoteOrLocal reports it and decides strict mode once.
struct CallEnd {
  farm::v1::NvccCallOutcome outcome = farm::v1::NVCC_CALL_OUTCOME_FALLBACK;
  farm::v1::FallbackReason code = farm::v1::FALLBACK_REASON_UNSPECIFIED;  // a fallback's
  std::string reason;                                                     // a fallback's
  // The local compile has run (to tell a compile error from what the farm missed, or after a
  // failed scan): its exit code is the call's. Else the call's exit code is `exit_code` for
  // the farm's answer, and a fallback still compiles here.
  bool compiled_here = false;
  int exit_code = 0;
  std::string farm_stderr;  // the farm's failed compile's diagnostics, for a strict refusal
  std::optional<CompileCallTiming> timing;  // the farm ran it: where its time went
};

// A compile that stays on this host, not yet compiled.
CallEnd Here(farm::v1::FallbackReason code, std::string reason) {
  CallEnd end;
  end.code = code;
  end.reason = std::move(reason);
  return end;
}

// The local compile after the farm or the scan said it fails: a compile error when it fails
// here too, else a fallback under `code` (the local object stands).
CallEnd CompiledHere(const CcInvocation& call, const FarmCcConfig& options,
                     farm::v1::FallbackReason code, std::string reason) {
  CallEnd end = Here(code, std::move(reason));
  end.compiled_here = true;
  end.exit_code = RunLocally(call, options);
  if (end.exit_code != 0) end.outcome = farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR;
  return end;
}

// The files a compile reads: from the scan kept for it when that still holds (scan_cache.h),
// else from its includes read here (compile_inputs.h), else from the compiler's scan run now,
// which is then kept.
struct GatheredInputs {
  absl::StatusOr<CompileInputs> inputs = absl::UnknownError("not gathered");
  bool scan_failed = false;  // the compiler's own scan failed: so will the compile
};

GatheredInputs GatherInputs(const CcInvocation& call, const cc::CcCompilePlan& plan,
                            const farm::v1::Digest& toolchain_digest,
                            const std::map<std::string, std::string>& env,
                            const std::map<std::string, std::string>& action_env,
                            const std::string& cwd, const FarmCcConfig& options, CallClock& clock) {
  auto log = ComponentLogger("farm-cc");
  GatheredInputs gathered;
  cc::FileFactsCache facts = cc::FileFactsCache::Load(
      absl::StrCat(options.cache_dir, "/files/facts-v1"), options.scan_cache_bytes / 128);
  absl::Cleanup keep_facts = [&] {
    if (absl::Status saved = facts.Save(); !saved.ok()) {
      log->warn("file facts not kept: {}", saved.message());
    }
  };
  const std::optional<ScanCache> cache =
      options.keep_scans ? ScanCache::ForCall(options.cache_dir, options.base_dir, toolchain_digest,
                                              call, action_env, cwd)
                         : std::nullopt;
  if (cache) {
    if (std::optional<ScanCache::KeptScan> kept = cache->Find()) {
      auto inputs = GatherCompileInputs(call, plan, kept->scan.files, kept->scan.search_dirs, env,
                                        cwd, &facts);
      if (inputs.ok() && cache->Holds(*kept, *inputs)) {
        clock.Mark("kept scan and input tree", "hash");
        gathered.inputs = *std::move(inputs);
        return gathered;
      }
      log->debug("{}: the kept scan no longer holds: scanning again", plan.source);
    }
  }
  if (options.read_includes) {
    // Without kept scans (farm-nvcc's temporary sources) nothing is kept: asked each time.
    auto search_dirs = options.keep_scans
                           ? CachedIncludeSearchList(options.cache_dir, options.scan_cache_bytes,
                                                     toolchain_digest, call, plan, action_env, cwd)
                           : cc::QueryIncludeSearchList(call.compiler, plan, cwd);
    auto inputs = search_dirs.ok()
                      ? GatherCompileInputsFromIncludes(call, plan, *search_dirs, env, cwd, &facts)
                      : absl::StatusOr<CompileInputs>(search_dirs.status());
    if (inputs.ok()) {
      clock.Mark("includes read and input tree", "scan");
      gathered.inputs = *std::move(inputs);
      return gathered;
    }
    log->debug("{}: the compiler scans: {}", plan.source, inputs.status().message());
  }
  auto scan = cc::ScanDependencies(call.compiler, plan, cwd);
  clock.Mark("scan", "scan");
  if (!scan.ok()) {
    gathered.scan_failed = true;
    gathered.inputs = scan.status();
    return gathered;
  }
  gathered.inputs =
      GatherCompileInputs(call, plan, scan->files, scan->search_dirs, env, cwd, &facts);
  clock.Mark("input tree", "hash");
  if (cache && gathered.inputs.ok()) {
    // Without the entry the next call only scans again.
    if (absl::Status s = cache->Keep(*scan, *gathered.inputs, options.scan_cache_bytes); !s.ok()) {
      log->warn("{}: scan not kept: {}", plan.source, s.message());
    }
  }
  return gathered;
}

// The compile on the farm when it can be the same compile there; else why not.
CallEnd Attempt(const CcInvocation& call, const FarmCcConfig& options) {
  if (options.disabled) return Here(farm::v1::FALLBACK_REASON_DISABLED, "FARM_CC_DISABLE=1");
  const auto family = cc::CompilerFamilyOf(call.compiler);
  if (!family) {
    return Here(farm::v1::FALLBACK_REASON_COMPILER,
                absl::StrCat("'", std::filesystem::path(call.compiler).filename().string(),
                             "' is not gcc, g++, clang or clang++"));
  }
  CallClock clock;
  auto plan = cc::PlanRemoteCompile(call.args, *family);
  if (!plan.ok()) {
    return Here(farm::v1::FALLBACK_REASON_COMMAND_LINE, std::string(plan.status().message()));
  }
  auto toolchain = cc::CachedHostToolchain(call.compiler, options.cache_dir);
  if (!toolchain.ok()) {
    return Here(farm::v1::FALLBACK_REASON_TOOLCHAIN,
                absl::StrCat("toolchain: ", toolchain.status().message()));
  }
  clock.Mark("toolchain", "other");
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  const std::map<std::string, std::string> env = ProcessEnvironment();
  auto action_env = CompileEnvironment(env, cwd);
  if (!action_env.ok()) {
    return Here(FallbackReasonOf(action_env.status(), farm::v1::FALLBACK_REASON_ENVIRONMENT),
                std::string(action_env.status().message()));
  }
  // The scan is the build host's share of a remote compile: a light slot, released before
  // the wait for the worker.
  std::optional<LocalJobSlot> scan_slot =
      LocalJobSlotIfUsable(options.local_jobs, JobClass::kLight, "farm-cc", "dependency scan",
                           options.local_job_priority);
  GatheredInputs gathered =
      GatherInputs(call, *plan, toolchain->tree_digest, env, *action_env, cwd, options, clock);
  scan_slot.reset();
  if (gathered.scan_failed) {
    // The preprocessor failed: the compile will too, and says why in its own words.
    return CompiledHere(call, options, farm::v1::FALLBACK_REASON_SCAN_FAILED,
                        "the dependency scan failed where the compile passed");
  }
  if (!gathered.inputs.ok()) {
    return Here(FallbackReasonOf(gathered.inputs.status(), farm::v1::FALLBACK_REASON_INPUTS),
                std::string(gathered.inputs.status().message()));
  }
  auto target = ResolveCoordinatorTarget(options.target);
  if (!target.ok()) {
    return Here(farm::v1::FALLBACK_REASON_NO_COORDINATOR, std::string(target.status().message()));
  }
  // A farm that is down must cost a build little: few, short retries.
  CasClientOptions cas_options;
  cas_options.max_attempts = 2;
  cas_options.initial_backoff = absl::Milliseconds(100);
  auto cas = CasClient::Connect(target->address, target->token, cas_options, target->channel);
  auto actions = ActionClient::Connect(target->address, target->token, target->channel);
  clock.Mark("connect", "other");
  auto result = CompileOnFarm(call, *plan, *toolchain, *gathered.inputs, *action_env, cwd, options,
                              actions.get(), cas.get(), clock);
  ComponentLogger("farm-cc")->debug("{}: {}", plan->source, clock.Summary());
  if (!result.ok()) {
    return Here(FallbackReasonOf(result.status(), farm::v1::FALLBACK_REASON_FARM_ERROR),
                std::string(result.status().message()));
  }
  if (result->exit_code != 0) {
    // The worker ran the same compile on the same files and it failed. Compiling here shows
    // the user the diagnostics from their own host and tells a real error (fails here too)
    // from a difference the farm missed (passes here: counted, and refused when strict).
    CallEnd end =
        CompiledHere(call, options, farm::v1::FALLBACK_REASON_FARM_COMPILE_FAILED,
                     absl::StrCat("the farm's compile failed (exit ", result->exit_code,
                                  ", worker ", result->worker.empty() ? "unknown" : result->worker,
                                  ") where the local one passed"));
    end.farm_stderr = std::move(result->stderr_text);
    return end;
  }
  std::cout << result->stdout_text << std::flush;
  std::cerr << result->stderr_text << std::flush;
  CallEnd end;
  end.outcome =
      result->cache_hit ? farm::v1::NVCC_CALL_OUTCOME_CACHED : farm::v1::NVCC_CALL_OUTCOME_SPLIT;
  end.timing = CompileCallTiming{
      .unit = plan->source, .wall_seconds = clock.WallSeconds(), .phases = clock.Phases()};
  return end;
}

}  // namespace

int ExecCompiler(const CcInvocation& call) {
  std::vector<std::string> argv = {call.compiler};
  argv.insert(argv.end(), call.args.begin(), call.args.end());
  std::vector<char*> pointers = NullTerminatedPointers(argv);
  execv(call.compiler.c_str(), pointers.data());
  std::cerr << "farm-cc: cannot run " << call.compiler << ": " << std::strerror(errno) << "\n";
  return 127;
}

int RemoteOrLocal(const CcInvocation& call, const FarmCcConfig& options) {
  // Not a compile (a link, -E, the driver's queries such as CMake's and nvcc's): the build
  // host's by nature, and not one of the build's compiles to count.
  if (!IsCompile(call)) return RunLocally(call, options);
  const CallEnd end = Attempt(call, options);
  // One report and one strict-mode decision per compile, whichever way it stayed here.
  if (end.outcome != farm::v1::NVCC_CALL_OUTCOME_FALLBACK) {
    Report(options, end.outcome, farm::v1::FALLBACK_REASON_UNSPECIFIED, "",
           end.timing ? &*end.timing : nullptr);
    return end.exit_code;
  }
  Report(options, end.outcome, end.code, end.reason);
  const std::string source = Source(call);
  if (options.strict) {
    std::cerr << StrictModeMessage({"farm-cc", source, "compile on this host", end.reason,
                                    "change the call so the farm can run it",
                                    "unset FARM_CC_STRICT"})
              << "\n"
              << end.farm_stderr;
    return kStrictExitCode;
  }
  if (end.compiled_here) return end.exit_code;
  ComponentLogger("farm-cc")->debug("compiling {} here: {}", source, end.reason);
  return RunLocally(call, options);
}

}  // namespace farm
