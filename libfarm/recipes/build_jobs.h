// How many parallel compile jobs ({jobs}, MAX_JOBS) a build host runs.
#pragma once

#include <cstdint>

namespace farm {

// min(cores, floor(RAM GiB / job_memory_gib)), at least 1. CUDA compiles are memory-bound
// (the seed measured ~4 GiB per nvcc job and went OOM with one job per core), so RAM caps
// the count before cores do on small hosts. E.g. 32 cores, 128 GiB, 5 GiB/job -> 25.
uint32_t BuildJobs(uint32_t cores, uint64_t ram_bytes, double job_memory_gib);

}  // namespace farm
