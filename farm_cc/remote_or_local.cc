#include "farm_cc/remote_or_local.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "farm_cc/farm_host_compile.h"
#include "farm_nvcc/outcome_report.h"
#include "libfarm/cc/dependency_scan.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/jobs/local_job_slot.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/subprocess.h"

extern char** environ;

namespace farm {
namespace {

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

void Report(const FarmCcOptions& options, farm::v1::NvccCallOutcome outcome,
            const std::string& reason = "") {
  ReportCallOutcome(options.target, options.build_id, farm::v1::COMPILE_CALL_KIND_HOST, outcome,
                    reason);
}

// The local compiler as a child printing to our stdout and stderr, under a heavy job slot;
// its exit code.
int RunLocally(const CcInvocation& call, const FarmCcOptions& options) {
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

// A compile that stays on this host: counted with its reason; refused in strict mode.
int Local(const CcInvocation& call, const FarmCcOptions& options, const std::string& reason) {
  Report(options, farm::v1::NVCC_CALL_OUTCOME_FALLBACK, reason);
  const std::string source = Source(call);
  if (options.strict) {
    // A reason that names its own fix keeps it; the generic one would bury it.
    const bool has_fix = reason.find(". Fix: ") != std::string::npos;
    std::cerr << "farm-cc: strict mode: " << source << " would compile on this host: " << reason
              << (has_fix ? "; or unset FARM_CC_STRICT\n"
                          : ". Fix: change the call so the farm can run it, or unset "
                            "FARM_CC_STRICT\n");
    return kStrictLocalExitCode;
  }
  ComponentLogger("farm-cc")->debug("compiling {} here: {}", source, reason);
  return RunLocally(call, options);
}

}  // namespace

int RemoteOrLocal(const CcInvocation& call, const FarmCcOptions& options) {
  // Not a compile (a link, -E, the driver's queries such as CMake's and nvcc's): the build
  // host's by nature, and not one of the build's compiles to count.
  if (!IsCompile(call)) return RunLocally(call, options);
  if (options.disabled) return Local(call, options, "FARM_CC_DISABLE=1");
  const auto family = cc::CompilerFamilyOf(call.compiler);
  if (!family) {
    return Local(call, options,
                 absl::StrCat("'", std::filesystem::path(call.compiler).filename().string(),
                              "' is not gcc, g++, clang or clang++"));
  }
  auto plan = cc::PlanRemoteCompile(call.args, *family);
  if (!plan.ok()) return Local(call, options, std::string(plan.status().message()));
  auto toolchain = cc::CachedHostToolchain(call.compiler, options.cache_dir);
  if (!toolchain.ok()) {
    return Local(call, options, absl::StrCat("toolchain: ", toolchain.status().message()));
  }
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  // The scan is the build host's share of a remote compile: a light slot, released before
  // the wait for the worker.
  std::optional<LocalJobSlot> scan_slot =
      LocalJobSlotIfUsable(options.local_jobs, JobClass::kLight, "farm-cc", "dependency scan",
                           options.local_job_priority);
  auto dependencies = cc::ScanDependencies(call.compiler, *plan, cwd);
  scan_slot.reset();
  if (!dependencies.ok()) {
    // The preprocessor failed: the compile will too, and says why in its own words.
    const int code = RunLocally(call, options);
    if (code != 0) {
      Report(options, farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR);
      return code;
    }
    Report(options, farm::v1::NVCC_CALL_OUTCOME_FALLBACK,
           "the dependency scan failed where the compile passed");
    return code;
  }
  auto target = ResolveCoordinatorTarget(options.target);
  if (!target.ok()) return Local(call, options, std::string(target.status().message()));
  // A farm that is down must cost a build little: few, short retries.
  CasClientOptions cas_options;
  cas_options.max_attempts = 2;
  cas_options.initial_backoff = absl::Milliseconds(100);
  auto cas = CasClient::Connect(target->address, target->token, cas_options, target->channel);
  auto actions = ActionClient::Connect(target->address, target->token, target->channel);
  auto result = CompileOnFarm(call, *plan, *toolchain, *dependencies, Environment(), cwd, options,
                              actions.get(), cas.get());
  if (!result.ok()) return Local(call, options, std::string(result.status().message()));
  if (result->exit_code != 0) {
    // The worker ran the same compile on the same files and it failed. Compiling here shows
    // the user the diagnostics from their own host and tells a real error (fails here too)
    // from a difference the farm missed (passes here: counted, and refused when strict).
    const int code = RunLocally(call, options);
    if (code != 0) {
      Report(options, farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR);
      return code;
    }
    const std::string reason = absl::StrCat(
        "the farm's compile failed (exit ", result->exit_code, ", worker ",
        result->worker.empty() ? "unknown" : result->worker, ") where the local one passed");
    Report(options, farm::v1::NVCC_CALL_OUTCOME_FALLBACK, reason);
    if (options.strict) {
      std::cerr << "farm-cc: strict mode: " << plan->source << ": " << reason << ":\n"
                << result->stderr_text;
      return kStrictLocalExitCode;
    }
    return code;
  }
  std::cout << result->stdout_text << std::flush;
  std::cerr << result->stderr_text << std::flush;
  Report(options, result->cache_hit ? farm::v1::NVCC_CALL_OUTCOME_CACHED
                                    : farm::v1::NVCC_CALL_OUTCOME_SPLIT);
  return 0;
}

}  // namespace farm
