// The fleet simulator's build: a profile expanded into the jobs ninja runs on the build host,
// the time scale that compresses it, and the lower bounds no schedule can beat.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/fleet_profile.h"

namespace farm::bench {

// Simulated seconds of compile <-> real time: `ms_per_second` real milliseconds per second.
struct TimeScale {
  double ms_per_second = 1;
  absl::Duration Real(double sim_seconds) const {
    return absl::Microseconds(static_cast<int64_t>(sim_seconds * ms_per_second * 1000));
  }
  double Sim(absl::Duration real) const { return absl::ToDoubleMilliseconds(real) / ms_per_second; }
};

// One ninja edge: a plain C++ compile, or an nvcc call that farm-nvcc splits.
struct BuildJob {
  bool cuda = false;
  int klass = 0;  // index into Profile::cuda_tus or Profile::host_tus
  int tu = 0;     // unique among all jobs: names the TU's files and actions
};

// The order ninja starts the build's edges in.
enum class NinjaOrder {
  // The build graph's order, which mixes CUDA and C++ TUs: every TU once, shuffled with the
  // seed (a fixed seed makes runs comparable). Where the heaviest TUs land is luck.
  kShuffled,
  // The same, but the CUDA TUs with the longest critical path first: what a build gets when
  // it starts its heaviest objects before the rest (e.g. `ninja OBJ...` before `ninja`).
  kLongestFirst,
};

absl::StatusOr<NinjaOrder> ParseNinjaOrder(const std::string& name);  // "shuffled", ...
std::string NinjaOrderName(NinjaOrder order);

std::vector<BuildJob> BuildOrder(const Profile& profile, uint64_t seed, NinjaOrder order);

// The shortest one CUDA TU can take: farm-nvcc's plan with the host compile ahead (see
// libfarm/nvcc/split_compile.cc): the host preprocess + cudafe++ chain beside the device
// preprocesses; then the host compile after the first arch's action, beside the others;
// fatbinary after the last.
double CudaTuCriticalPath(const CudaTuClass& k, const std::vector<std::string>& archs);

struct LowerBounds {
  double device_s = 0;  // total work on the farm (device, and host compiles on it) / fleet slots
  // Build host local work / its cores, the link excepted: it starts after every compile
  // and runs alone, so it adds its whole length: (local work - link) / cores + link.
  double host_s = 0;
  double critical_s = 0;  // the longest TU plus the link
  double device_work_s = 0, host_work_s = 0, link_s = 0;
  // Not one of the three: the bound the build host's ninja -j sets, since a CUDA TU holds its
  // job slot while its device actions run elsewhere (sum of each job's shortest time / jobs,
  // plus the link).
  double jobs_s = 0;
  int device_actions = 0;
  double Bound() const;
  std::string Binding() const;  // "device", "build host" or "critical path"
};

// `host_scan_fraction` > 0: host compiles run on the farm (BuildHostOptions), their work
// counted with the device work and only that fraction of it on the build host.
LowerBounds ComputeLowerBounds(const Profile& profile, uint64_t fleet_slots, uint32_t jobs,
                               double host_scan_fraction = 0);

}  // namespace farm::bench
