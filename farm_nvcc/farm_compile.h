// One nvcc -c call compiled with the farm: restored whole from the compile cache when it
// has seen it, else split (device compiles on the farm, host steps here) and recorded there.
// What the compile prints is printed as nvcc would print it.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "farm/v1/builds.pb.h"
#include "farm_nvcc/farm_nvcc_config.h"
#include "libfarm/client/build_client.h"
#include "libfarm/nvcc/compile_cache.h"
#include "libfarm/nvcc/farm_device_compiler.h"
#include "libfarm/nvcc/nvcc_command_line.h"

namespace farm {

class FarmCompile {
 public:
  FarmCompile(ActionClient* actions, CasClient* cas, const FarmNvccConfig& options)
      : options_(options), device_compiler_(actions, cas), compile_cache_(actions, cas) {}

  // Compiles `command` (it passed CheckDecomposable) with the real `nvcc`. Returns
  // NVCC_CALL_OUTCOME_CACHED or _SPLIT; an error says why the caller must run plain nvcc
  // (kAborted: a compile error, for nvcc to report).
  absl::StatusOr<farm::v1::NvccCallOutcome> Compile(const std::string& nvcc,
                                                    const NvccCommandLine& command);

  // Where the compiles so far spent their time (issue 45): the first one's unit, their wall
  // times summed, and of each split compile the farm phases of its slowest device job (its
  // critical path on the farm); the build host's steps (preprocessing, the host compile,
  // uploads and downloads, the compile cache) are `other`.
  const CompileCallTiming& timing() const { return timing_; }

 private:
  void AddTiming(const NvccCommandLine& command, absl::Time start,
                 const farm::v1::CallPhases& farm);

  const FarmNvccConfig& options_;
  FarmDeviceCompiler device_compiler_;
  CompileCache compile_cache_;
  CompileCallTiming timing_;
};

}  // namespace farm
