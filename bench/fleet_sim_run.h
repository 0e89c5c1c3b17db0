// One fleet simulation end to end: a real farm-coordinator, a fleet of sleeping workers
// over real gRPC, and the build host replaying a profile's build through them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/fleet_report.h"

namespace farm::bench {

struct FleetSimOptions {
  std::string profile_path;
  int hosts = 8;
  // Instance types by weight, cycled over the hosts: "m8g.4xlarge=3,grace=1" makes 8 hosts
  // 6 m8g.4xlarge and 2 grace.
  std::string mix = "m8g.4xlarge=3,grace=1";
  double ms_per_second = 1;
  int repeat = 1;                        // multiplies every TU class's count
  uint64_t seed = 1;                     // the build order's shuffle
  std::string ninja_order = "shuffled";  // shuffled, longest-first (bench/fleet_workload.h)
  uint32_t jobs = 0;       // ninja -j; 0: the recipe's rule (BuildJobs) from the build host
  bool farm_jobs = false;  // ninja -j by {farm_jobs} (FarmBuildJobs): the fleet's slots too
  std::string queue_order = "longest-first";  // the coordinator's --queue-order
  bool memory_aware = true;                   // the coordinator's --memory-aware
  // Replay the build once before the measured run, so the coordinator has learnt each
  // action's wall time and peak RAM as it would have from yesterday's build.
  bool learn_first = true;
  // Send the profile's cost_hints for units the farm has not learnt (a first build with a
  // recipe that names its heavy units).
  bool cost_hints = false;
  // > 0: host compiles on the farm through farm-cc, this fraction of each kept on the build
  // host as its dependency scan (BuildHostOptions::host_scan_fraction).
  double host_scan_fraction = 0;
  // The build host's local job slots: "priority" or "as-they-come"
  // (BuildHostOptions::local_priorities).
  std::string local_order = "priority";
  std::string work_dir;  // emptied and used; removed after the run unless keep_work_dir
  bool keep_work_dir = false;
};

absl::StatusOr<FleetReport> RunFleetSim(const FleetSimOptions& options);

}  // namespace farm::bench
