// One nvcc -c call, split: nvcc --dryrun plans the steps; host-side steps (preprocessing,
// cudafe++, fatbinary, the host compile) run here with nvcc's own arguments; each virtual
// arch's cicc + ptxas runs through a DeviceCompiler (the farm). The object is what nvcc
// would have written: the same steps on the same inputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/jobs/local_job_limits.h"
#include "libfarm/nvcc/cost_hints.h"
#include "libfarm/nvcc/device_compiler.h"
#include "libfarm/nvcc/nvcc_command_line.h"

namespace farm {

struct SplitCompileRequest {
  std::string nvcc;         // the real nvcc
  NvccCommandLine command;  // passed CheckDecomposable
  std::string build_id;
  bool host_compile_ahead = true;  // see HostCompileAhead
  // The build host's local job slots the local steps take (LocalSteps); none when unset.
  std::optional<LocalJobLimits> local_jobs;
  // A unit whose device jobs took this long on the farm before (the longest of them) takes
  // its local slots ahead of other units' (LocalSteps::set_long_unit).
  double long_unit_seconds = kLongUnitSeconds;
  // The build's cost hints (FARM_NVCC_COST_HINTS): what a unit the farm has not run yet is
  // expected to take, for the same purpose and for the farm's order; none when null.
  const CostHints* cost_hints = nullptr;
  // farm-cc: the host compile (cudafe++'s output by the host compiler) runs on the farm
  // through it; empty: here.
  std::string host_compile_launcher;
};

struct SplitCompileResult {
  // What the steps printed, in plan order: the caller passes it on as nvcc would.
  std::string stdout_text;
  std::string stderr_text;
  std::vector<DeviceJob> jobs;
  std::vector<DeviceJobOutcome> outcomes;
  // Every file the preprocessors read (absolute, sorted): what the compile depends on.
  std::vector<std::string> dependencies;
  // Set when cudafe++'s module id was per-process and farm-nvcc made it of the unit's inputs.
  std::optional<std::string> module_id_of_inputs;
};

// Compiles, or returns why it could not; the caller then runs plain nvcc, which also
// reports compile errors in nvcc's own words. kAborted: nvcc refused the command line or
// a step exited non-zero (a compile error; not worth a log line). Anything else: the split itself
// failed.
absl::StatusOr<SplitCompileResult> SplitCompile(const SplitCompileRequest& request,
                                                DeviceCompiler& device_compiler);

}  // namespace farm
