// Binary compatibility of CUDA device code: which GPUs a cubin (SASS) or PTX built for one
// target runs on, and, for a package that can build only some targets, which of them serves
// a requested GPU. One copy of these rules for the planner and the verifier.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "libfarm/cuda/arch_list.h"

namespace farm {

// Whether SASS built for `built` runs on a GPU of compute capability `gpu_sm` (75, 121 ...).
// Generic sm_XY runs on sm_XZ with Z >= Y of the same major; `a` code only on sm_XY itself;
// `f` (family) code on the same major from XY up.
bool SassRunsOn(const CudaTarget& built, int gpu_sm);

// Whether PTX for `built` runs (JIT-compiled by the driver) on `gpu_sm`: generic compute_XY on
// every SM >= XY; `a`/`f` PTX only where their SASS would run.
bool PtxRunsOn(const CudaTarget& built, int gpu_sm);

// How one requested arch is served by the planned build.
struct ArchRoute {
  ArchRequest requested;
  ArchRequest built;  // what the build compiles for it

  bool Native() const { return requested.target == built.target; }
  // "12.1: runs via sm_120 SASS", "9.0: sm_90 SASS", "9.0: sm_90 SASS + compute_90 PTX".
  std::string Describe() const;
};

// Of `buildable` (the targets a package can compile), the one whose SASS serves a GPU of
// `gpu_sm` best: the exact target when buildable, else the newest whose SASS runs there.
// nullopt when none does.
std::optional<CudaTarget> BestBuildableSass(int gpu_sm, const std::vector<CudaTarget>& buildable);

}  // namespace farm
