// One virtual arch's device compile (cicc, then ptxas for each real arch) cut out of an
// nvcc --dryrun plan so that it can run on another host: nvcc's own commands, with every
// temporary renamed to a bare file name in the action's scratch directory and the toolkit
// root replaced by $FARM_CUDA_ROOT, which the worker sets to its toolkit of the same version.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/nvcc/nvcc_dryrun.h"

namespace farm {

// A file of the job: where it is on the build host, and its name in the action's scratch dir.
struct DeviceJobFile {
  std::string local_path;
  std::string name;
};

struct DeviceJob {
  std::string virtual_arch;  // "compute_90a"
  // The compile shard the job counts towards: its first real arch ("sm_90a"), or the
  // virtual arch when it only produces PTX.
  std::string shard;
  std::vector<std::string> sms;  // real archs ptxas builds ("sm_90a"): the worker must list them
  std::string script;            // for `sh -c`, run in the scratch dir
  std::vector<DeviceJobFile> inputs;   // the preprocessed device source and the module id
  std::vector<DeviceJobFile> outputs;  // PTX, cubins, and the host stub cicc writes
};

// Plans one job per device group of `dryrun`, which must have been made with
// RunNvccDryrun(..., private_temp_dir = `temp_dir`). Fails (the caller then runs plain nvcc)
// when a step names a file outside `temp_dir` that the job would need.
absl::StatusOr<std::vector<DeviceJob>> PlanDeviceJobs(const NvccDryrun& dryrun,
                                                      const std::string& temp_dir);

}  // namespace farm
