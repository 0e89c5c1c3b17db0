#include "farm_nvcc/split_or_fallback.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "farm_nvcc/outcome_report.h"
#include "farm_nvcc/strict_mode.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/logging/logger.h"
#include "libfarm/nvcc/compile_cache.h"
#include "libfarm/nvcc/farm_device_compiler.h"
#include "libfarm/nvcc/split_compile.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

// Runs plain nvcc for a call that could not be split, after reporting why; in strict mode
// (never for a compile error) refuses instead.
int Fallback(const NvccInvocation& call, const FarmNvccOptions& options, const absl::Status& why) {
  auto log = ComponentLogger("farm-nvcc");
  if (why.code() == absl::StatusCode::kAborted) {
    // A compile error: plain nvcc reports it in its own words, with its own exit code.
    log->debug("{}; running plain nvcc for its diagnostics", why.message());
    ReportCallOutcome(options, farm::v1::NVCC_CALL_OUTCOME_COMPILE_ERROR);
    return ExecPlainNvcc(call);
  }
  const std::string reason(why.message());
  ReportCallOutcome(options, farm::v1::NVCC_CALL_OUTCOME_FALLBACK, reason);
  if (options.strict) {
    std::cerr << StrictModeMessage(call, reason) << "\n";
    return kStrictFallbackExitCode;
  }
  log->info("running plain nvcc: {}", reason);
  return ExecPlainNvcc(call);
}

}  // namespace

int ExecPlainNvcc(const NvccInvocation& call) {
  std::vector<std::string> argv = {call.nvcc};
  argv.insert(argv.end(), call.args.begin(), call.args.end());
  std::vector<char*> pointers = NullTerminatedPointers(argv);
  execv(call.nvcc.c_str(), pointers.data());
  std::cerr << "farm-nvcc: cannot run " << call.nvcc << ": " << std::strerror(errno) << "\n";
  return 127;
}

int SplitOrFallback(const NvccInvocation& call, const FarmNvccOptions& options) {
  if (options.disabled) return Fallback(call, options, absl::CancelledError("FARM_NVCC_DISABLE=1"));
  auto command = ParseNvccCommandLine(call.args);
  if (!command.ok()) return Fallback(call, options, command.status());
  if (absl::Status s = CheckDecomposable(*command); !s.ok()) return Fallback(call, options, s);
  for (const char* variable : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"}) {
    const char* value = std::getenv(variable);
    if (value == nullptr) continue;
    if (absl::Status s = CheckEnvironmentFlags(variable, value); !s.ok()) {
      return Fallback(call, options, s);
    }
  }

  auto target = ResolveCoordinatorTarget(options.target);
  if (!target.ok()) return Fallback(call, options, target.status());

  // A farm that is down must cost a build little: few, short retries.
  CasClientOptions cas_options;
  cas_options.max_attempts = 2;
  cas_options.initial_backoff = absl::Milliseconds(100);
  auto cas = CasClient::Connect(target->address, target->token, cas_options, target->channel);
  auto actions = ActionClient::Connect(target->address, target->token, target->channel);
  FarmDeviceCompiler device_compiler(actions.get(), cas.get());
  auto log = ComponentLogger("farm-nvcc");

  // A compile seen before, whose every input is unchanged, is restored whole.
  CompileCache compile_cache(actions.get(), cas.get());
  std::optional<CompileKey> cache_key;
  if (!command->output.empty()) {
    if (auto key = CompileCacheKey(call.nvcc, *command); key.ok()) cache_key = *std::move(key);
  }
  if (cache_key) {
    // Says what the key holds of where the call runs, and why: a miss in another build tree
    // or under another object name is then explained.
    log->debug("whole-compile key {} (working directory: {}; output names: {})", cache_key->key,
               cache_key->scope.working_directory.value_or("not in the key"),
               cache_key->scope.output_names.value_or("not in the key"));
    auto hit = compile_cache.Restore(*cache_key, CompileCacheOutputs(*command));
    if (!hit.ok()) {
      // A refused entry is someone writing to the cache what no compile recorded: say so.
      if (hit.status().code() == absl::StatusCode::kPermissionDenied) {
        log->warn("{}", hit.status().message());
      } else {
        log->debug("compile cache: {}", hit.status().message());
      }
    }
    if (hit.ok() && hit->has_value()) {
      std::cout << (*hit)->stdout_text() << std::flush;
      std::cerr << (*hit)->stderr_text() << std::flush;
      log->debug("{}: compile cache", command->inputs[0]);
      ReportCallOutcome(options, farm::v1::NVCC_CALL_OUTCOME_CACHED);
      return 0;
    }
  }

  SplitCompileRequest request;
  request.nvcc = call.nvcc;
  request.command = *std::move(command);
  request.build_id = options.build_id;
  request.host_compile_ahead = options.host_compile_ahead;
  const NvccCommandLine parsed = request.command;
  auto result = SplitCompile(request, device_compiler);
  if (!result.ok()) return Fallback(call, options, result.status());
  std::cout << result->stdout_text << std::flush;
  std::cerr << result->stderr_text << std::flush;
  if (result->module_id_of_inputs) {
    log->debug("{}: cudafe++'s module id carried its process id; the unit's is {}",
               parsed.inputs[0], *result->module_id_of_inputs);
  }
  if (cache_key) {
    if (absl::Status s =
            compile_cache.Record(*cache_key, result->dependencies, CompileCacheOutputs(parsed),
                                 result->stdout_text, result->stderr_text);
        !s.ok()) {
      log->debug("compile cache: not recorded: {}", s.message());
    }
  }
  for (size_t i = 0; i < result->jobs.size(); ++i) {
    const DeviceJobOutcome& o = result->outcomes[i];
    log->debug("{}: {}", result->jobs[i].shard,
               o.cache_hit ? std::string("action cache") : absl::StrCat("ran on ", o.worker));
  }
  ReportCallOutcome(options, farm::v1::NVCC_CALL_OUTCOME_SPLIT);
  return 0;
}

}  // namespace farm
