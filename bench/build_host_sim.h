// The simulated build host: replays a profile's build the way ninja and farm-nvcc run it.
// `jobs` ninja edges at once; every local step (host preprocess, device preprocesses,
// cudafe++, fatbinary, host compile, plain C++ compiles, the link) takes one of `cores` for
// its compressed duration; each CUDA TU's device compiles go through the real
// FarmDeviceCompiler (inputs into the CAS, one action per arch, outputs back), whose
// actions the sleeping workers run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/fleet_workload.h"
#include "libfarm/nvcc/cost_hints.h"

namespace farm::bench {

struct BuildHostOptions {
  std::string address, token;
  std::string work_dir;  // the TUs' preprocessed sources and returned cubins
  std::string build_id = "fleet-sim";
  // Written into every preprocessed source: replays with different tags are different
  // actions (no cache hits) with the same history keys.
  std::string run_tag;
  std::string cuda_version = "13.0", cuda_release = "13.0.88";
  uint32_t jobs = 0;   // ninja -j (MAX_JOBS)
  uint32_t cores = 0;  // local steps at once
  TimeScale scale;
  // > 0: farm-cc runs the host compiles (plain C++ TUs and each CUDA TU's host compile) on the
  // workers; the build host keeps this fraction of each as its dependency scan (farm-cc's -M:
  // 4-9% of a torch unit's compile, docs/farm-cc.md). 0: the build host compiles them.
  double host_scan_fraction = 0;
  // The build host's local job slots serve by LocalJobSlot's priorities: the steps of a unit
  // the farm learnt to be long first (farm-nvcc asks it, GetExpectedCosts), then those that
  // close a unit's work (its host compile's scan, its fatbinary); false: as they come.
  bool local_priorities = true;
  // The profile's cost hints, sent as a recipe's FARM_NVCC_COST_HINTS would make farm-nvcc
  // send them (in simulated seconds); none when null.
  const CostHints* cost_hints = nullptr;
};

struct BuildHostRun {
  absl::Time start, end;
  absl::Time last_job_started;  // ninja had nothing more to start from here on
  absl::Time compiles_done;     // the link starts
  int cuda_tus = 0, host_tus = 0;
  int host_actions = 0;  // host compiles the farm ran (host_scan_fraction > 0)
  int failed_tus = 0;
  std::string first_error;
  double local_busy_s = 0;  // simulated core-seconds of local steps
};

BuildHostRun ReplayBuild(const Profile& profile, const std::vector<BuildJob>& order,
                         const BuildHostOptions& options);

}  // namespace farm::bench
