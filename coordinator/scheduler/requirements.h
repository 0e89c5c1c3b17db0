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

// The Python versions a worker advertises, "3.10, 3.11", or "no Python".
std::string PythonVersions(const farm::v1::WorkerCapabilities& worker);

// INVALID_ARGUMENT for requirements no worker could ever meet (malformed versions).
absl::Status ValidateRequirements(const farm::v1::Requirements& req);

}  // namespace farm::coordinator
