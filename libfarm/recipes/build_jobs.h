// How many parallel compile jobs ({jobs}, MAX_JOBS) a build host runs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace farm {

// min(cores, floor(RAM GiB / job_memory_gib)), at least 1. CUDA compiles are memory-bound
// (the seed measured ~4 GiB per nvcc job and went OOM with one job per core), so RAM caps
// the count before cores do on small hosts. E.g. 32 cores, 128 GiB, 5 GiB/job -> 25.
uint32_t BuildJobs(uint32_t cores, uint64_t ram_bytes, double job_memory_gib);

// RAM one job needs on the build host when nvcc's device work runs on the farm: the host
// preprocess and the host compile of a heavy TU, not cicc and ptxas.
inline constexpr double kFarmJobMemoryGib = 2.0;

// {farm_jobs}: the build host's parallel jobs when its device compiles run on the farm. A
// farm-nvcc call holds its job while its device actions run elsewhere, so {jobs} (sized for
// local nvcc) leaves the farm idle. The jobs the farm can keep busy, its slots over the archs
// each call fans out to, plus the host's cores for host-side steps; at most what the host's
// RAM holds at kFarmJobMemoryGib each; never fewer than `jobs`. E.g. 32 cores, 128 GiB, 960
// farm slots, 3 archs -> min(32 + 320, 64) = 64.
uint32_t FarmBuildJobs(uint32_t cores, uint64_t ram_bytes, uint32_t jobs, uint32_t farm_slots,
                       size_t archs);

}  // namespace farm
