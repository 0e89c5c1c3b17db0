// Whether a worker may run an action: its platform, glibc, CUDA toolkit, RAM, labels, Python
// and shared libraries against the action's requirements.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "farm/v1/actions.pb.h"
#include "farm/v1/types.pb.h"

namespace farm::coordinator {

// OK, or FAILED_PRECONDITION naming the first requirement the worker misses, e.g.
// "needs CUDA 12.9, has 13.0".
absl::Status CheckRequirements(const farm::v1::Requirements& req,
                               const farm::v1::WorkerCapabilities& worker);

// The farm's own rule on top of what an action requires (coordinator flags).
struct PlacementPolicy {
  // CPU archs of the workers that may run actions naming no CPU arch: farm-nvcc's device
  // compiles, which give the same bytes on any CPU with the toolkit release. Empty: any.
  std::vector<std::string> portable_cpu_archs;
};

// CheckRequirements, then `policy`: "the farm runs actions that name no CPU arch only on
// aarch64 workers (--device-cpu-archs), has x86_64".
absl::Status CheckPlacement(const farm::v1::Requirements& req,
                            const farm::v1::WorkerCapabilities& worker,
                            const PlacementPolicy& policy);

// The Python versions a worker advertises, "3.10, 3.11", or "no Python".
std::string PythonVersions(const farm::v1::WorkerCapabilities& worker);

// INVALID_ARGUMENT for requirements no worker could ever meet (malformed versions).
absl::Status ValidateRequirements(const farm::v1::Requirements& req);

}  // namespace farm::coordinator
