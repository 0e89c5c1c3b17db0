// Which CUDA toolkit a build uses: one that the recipe allows, that compiles every requested
// arch, and that a registered worker offers. A pure function of its inputs.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "farm/v1/types.pb.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/recipes/recipe.h"

namespace farm {

struct ToolkitChoice {
  ToolkitVersion version;
  std::vector<std::string> workers;  // names of the given workers offering it, in input order
};

// Picks the newest toolkit offered by `workers` that lies in `allowed` and compiles every
// arch in `archs` (by the arch table and, when the worker lists them, the SMs its nvcc
// reports). The caller passes the workers that may take part (e.g. online ones).
// FAILED_PRECONDITION when there is none, with a message that says why for each offered
// toolkit and what would fix it, e.g. "sm_70 is not supported by CUDA 13.0 (lowest: sm_75);
// the recipe allows CUDA 12.4–13.0: register a worker with CUDA 12.4–12.9 or drop 7.0".
absl::StatusOr<ToolkitChoice> ChooseToolkit(const ArchList& archs, const CudaRange& allowed,
                                            const std::vector<farm::v1::Worker>& workers);

// The toolkit versions (within `allowed`, among the ones the arch table knows of) that
// compile every arch: [min, max], or an error naming the arch that makes it empty.
absl::StatusOr<CudaRange> FeasibleToolkits(const ArchList& archs, const CudaRange& allowed);

}  // namespace farm
