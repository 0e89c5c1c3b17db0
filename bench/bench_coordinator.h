// A farm-coordinator started for a benchmark: its own data dir, loopback port, no HTTP.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libfarm/process/subprocess.h"

namespace farm::bench {

struct BenchCoordinator {
  Subprocess process;
  std::string address;
  std::string token;
  absl::Duration start_time;  // from spawn to its ready file
};

absl::StatusOr<BenchCoordinator> StartBenchCoordinator(const std::string& work,
                                                       const std::string& data_dir,
                                                       const std::vector<std::string>& extra = {});

// The process's resident set, in MiB (0 if unknown).
double ResidentMib(int pid);
// The most it has been resident since it started (VmHWM), in MiB (0 if unknown).
double PeakResidentMib(int pid);
// User + system CPU time it has used, in seconds (0 if unknown).
double CpuSeconds(int pid);

}  // namespace farm::bench
