#include "farm_nvcc/split_or_fallback.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "farm_nvcc/farm_compile.h"
#include "farm_nvcc/outcome_report.h"
#include "farm_nvcc/strict_mode.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/logging/logger.h"
#include "libfarm/nvcc/nvcc_command_line.h"
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
  FarmCompile farm(actions.get(), cas.get(), options);
  auto outcome = farm.Compile(call.nvcc, *command);
  if (!outcome.ok()) return Fallback(call, options, outcome.status());
  ReportCallOutcome(options, *outcome);
  return 0;
}

}  // namespace farm
