// A workload profile for the fleet simulator: what one wheel build compiles, in seconds of
// one core (build host) or one slot (worker), and the RAM its device compiles peak at. Loaded
// from JSON (bench/profiles/); keys named "source" or "notes" say where a number comes from
// and are ignored here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace farm::bench {

struct DeviceCost {
  double seconds = 0;       // cicc + ptxas for one arch: one farm action
  double peak_ram_mib = 0;  // of that process
};

// Translation units with the same costs: one nvcc call each, split by farm-nvcc.
struct CudaTuClass {
  std::string name;
  int count = 0;
  double host_preprocess_s = 0;
  double device_preprocess_s = 0;  // per arch, on the build host
  double cudafe_s = 0;
  double fatbinary_s = 0;
  double host_compile_s = 0;
  std::map<std::string, DeviceCost> device;  // by arch ("sm_90"), one action each
};

// Plain C++ translation units: the build host compiles them itself.
struct HostTuClass {
  std::string name;
  int count = 0;
  double seconds = 0;
};

struct BuildHostSpec {
  uint32_t cores = 0;
  double ram_gib = 0;
  double job_memory_gib = 4;  // the recipe's: MAX_JOBS = min(cores, RAM / this)
};

struct Profile {
  std::string name;
  std::vector<std::string> archs;
  BuildHostSpec build_host;
  std::vector<HostTuClass> host_tus;
  std::vector<CudaTuClass> cuda_tus;
  double link_s = 0;  // after every compile: the final link, on one core
  // What a recipe would tell farm-nvcc of the units before any run (FARM_NVCC_COST_HINTS's
  // GLOB=SECONDS;..., matched against "CLASS/tu-N.cu"); "" for none.
  std::string cost_hints;
};

absl::StatusOr<Profile> LoadProfile(const std::string& path);

// Multiplies every class's count by `repeat` (a small profile made larger for a test).
void RepeatProfile(Profile& profile, int repeat);

}  // namespace farm::bench
