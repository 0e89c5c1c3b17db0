// Runs device jobs on the farm: inputs into the CAS, one action per job (its shard named
// after the job's arch), then the outputs back to where the host steps expect them.
#pragma once

#include "libfarm/actions/action_client.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/nvcc/device_compiler.h"

namespace farm {

class FarmDeviceCompiler final : public DeviceCompiler {
 public:
  FarmDeviceCompiler(ActionClient* actions, CasClient* cas) : actions_(actions), cas_(cas) {}

  absl::StatusOr<std::vector<DeviceJobOutcome>> Compile(
      const std::vector<DeviceJob>& jobs, const DeviceCompileContext& context) override;
  // From the coordinator's action history; zeros without a source name or when it cannot
  // answer (a coordinator from before GetExpectedCosts).
  std::vector<double> ExpectedSeconds(const std::vector<DeviceJob>& jobs,
                                      const DeviceCompileContext& context) override;

 private:
  // A finished action's outcome; for an exit of 0 its outputs are written to their paths.
  absl::StatusOr<DeviceJobOutcome> Collect(const DeviceJob& job,
                                           const farm::v1::ActionStatus& status);

  ActionClient* actions_;
  CasClient* cas_;
};

// The action's history key of a job of the unit `source_name` (farm.v1.Action.history_key).
std::string DeviceJobHistoryKey(const std::string& source_name, const DeviceJob& job);

// The action a job becomes: `sh -c SCRIPT` with a fixed environment, so the same device
// compile from any checkout of the same source is the same action (and hits the cache).
farm::v1::Action DeviceJobAction(const DeviceJob& job, const DeviceCompileContext& context,
                                 const std::vector<farm::v1::Digest>& input_digests);

}  // namespace farm
