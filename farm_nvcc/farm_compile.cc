#include "farm_nvcc/farm_compile.h"

#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "libfarm/actions/call_phases.h"
#include "libfarm/logging/logger.h"
#include "libfarm/nvcc/split_compile.h"

namespace farm {

absl::StatusOr<farm::v1::NvccCallOutcome> FarmCompile::Compile(const std::string& nvcc,
                                                               const NvccCommandLine& command) {
  auto log = ComponentLogger("farm-nvcc");
  const absl::Time start = absl::Now();
  // A compile seen before, whose every input is unchanged, is restored whole.
  std::optional<CompileKey> cache_key;
  if (!command.output.empty()) {
    if (auto key = CompileCacheKey(nvcc, command); key.ok()) cache_key = *std::move(key);
  }
  if (cache_key) {
    // Says what the key holds of where the call runs, and why: a miss in another build tree
    // or under another object name is then explained.
    log->debug("whole-compile key {} (working directory: {}; output names: {})", cache_key->key,
               cache_key->scope.working_directory.value_or("not in the key"),
               cache_key->scope.output_names.value_or("not in the key"));
    auto hit = compile_cache_.Restore(*cache_key, CompileCacheOutputs(command));
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
      log->debug("{}: compile cache", command.inputs[0]);
      AddTiming(command, start, farm::v1::CallPhases());
      return farm::v1::NVCC_CALL_OUTCOME_CACHED;
    }
  }

  SplitCompileRequest request;
  request.nvcc = nvcc;
  request.command = command;
  request.build_id = options_.build_id;
  request.host_compile_ahead = options_.host_compile_ahead;
  request.local_jobs = options_.local_jobs;
  request.long_unit_seconds = options_.long_unit_seconds;
  request.cost_hints = &options_.cost_hints;
  request.host_compile_launcher = options_.farm_cc;
  auto result = SplitCompile(request, device_compiler_);
  if (!result.ok()) return result.status();
  std::cout << result->stdout_text << std::flush;
  std::cerr << result->stderr_text << std::flush;
  if (result->module_id_of_inputs) {
    log->debug("{}: cudafe++'s module id carried its process id; the unit's is {}",
               command.inputs[0], *result->module_id_of_inputs);
  }
  if (cache_key) {
    if (absl::Status s =
            compile_cache_.Record(*cache_key, result->dependencies, CompileCacheOutputs(command),
                                  result->stdout_text, result->stderr_text);
        !s.ok()) {
      log->debug("compile cache: not recorded: {}", s.message());
    }
  }
  const farm::v1::CallPhases* slowest = nullptr;
  for (size_t i = 0; i < result->jobs.size(); ++i) {
    const DeviceJobOutcome& o = result->outcomes[i];
    log->debug("{}: {}", result->jobs[i].shard,
               o.cache_hit ? std::string("action cache") : absl::StrCat("ran on ", o.worker));
    if (slowest == nullptr || PhaseSum(o.farm_phases) > PhaseSum(*slowest)) {
      slowest = &o.farm_phases;
    }
  }
  AddTiming(command, start, slowest != nullptr ? *slowest : farm::v1::CallPhases());
  return farm::v1::NVCC_CALL_OUTCOME_SPLIT;
}

void FarmCompile::AddTiming(const NvccCommandLine& command, absl::Time start,
                            const farm::v1::CallPhases& farm) {
  const double wall = absl::ToDoubleSeconds(absl::Now() - start);
  if (timing_.unit.empty() && !command.inputs.empty()) timing_.unit = command.inputs[0];
  timing_.wall_seconds += wall;
  farm::v1::CallPhases phases = farm;
  SetOtherToTheRest(phases, wall);
  AddPhases(timing_.phases, phases);
}

}  // namespace farm
