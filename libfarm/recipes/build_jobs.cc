#include "libfarm/recipes/build_jobs.h"

#include <algorithm>
#include <cmath>

namespace farm {

uint32_t BuildJobs(uint32_t cores, uint64_t ram_bytes, double job_memory_gib) {
  const double gib = static_cast<double>(ram_bytes) / static_cast<double>(uint64_t{1} << 30);
  const double per_job = job_memory_gib > 0 ? job_memory_gib : 4.0;
  const double by_ram = std::floor(gib / per_job);
  const uint32_t by_ram_jobs =
      by_ram >= 1 ? static_cast<uint32_t>(std::min(by_ram, 1e6)) : uint32_t{1};
  return std::max<uint32_t>(1, std::min(std::max<uint32_t>(cores, 1), by_ram_jobs));
}

uint32_t FarmBuildJobs(uint32_t cores, uint64_t ram_bytes, uint32_t jobs, uint32_t farm_slots,
                       size_t archs) {
  const uint64_t by_work =
      uint64_t{cores} + farm_slots / std::max<uint64_t>(1, static_cast<uint64_t>(archs));
  // BuildJobs with one core per job removed from the bound: RAM alone caps it.
  const uint32_t by_ram = BuildJobs(UINT32_MAX, ram_bytes, kFarmJobMemoryGib);
  const uint64_t farm = std::min<uint64_t>(by_work, by_ram);
  return static_cast<uint32_t>(std::max<uint64_t>(std::max<uint32_t>(jobs, 1), farm));
}

}  // namespace farm
