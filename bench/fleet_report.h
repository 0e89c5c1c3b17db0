// The fleet simulator's figures: makespan against its lower bound, fleet utilization over
// time, queue waits, per-arch finish times and the coordinator's cost; printed as a table
// or JSON. All times are simulated (compile) seconds unless named "wall".
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/build_host_sim.h"
#include "bench/fleet_workload.h"
#include "bench/sleeping_worker.h"
#include "farm/v1/actions.pb.h"

namespace farm::bench {

struct FleetFacts {
  std::string profile;
  std::string fleet;  // "6 x m8g.4xlarge + 2 x grace"
  int hosts = 0;
  uint64_t slots = 0;
  std::vector<double> worker_ram_mib;  // by worker index
  uint32_t build_host_cores = 0, build_host_jobs = 0;
  std::string ninja_order;  // the build host's (shuffled, longest-first)
  std::string local_order;  // its local job slots' (priority, as-they-come)
  TimeScale scale;
  std::string queue_order;    // the coordinator's --queue-order
  bool memory_aware = false;  // and --memory-aware
  bool learnt = false;        // a learning replay ran first
  bool cost_hints = false;    // the profile's cost hints sent for units not learnt
};

struct FleetReport {
  FleetFacts facts;
  LowerBounds bounds;
  double makespan_s = 0;
  double wall_s = 0;
  std::vector<double> utilization;  // busy slots / fleet slots, per tenth of the makespan
  // The build host: its cores' busy share over the makespan, and the tail: from the moment
  // ninja started its last edge to the link's start, the TUs still running held the build.
  double host_cores_busy = 0;
  double last_job_started_s = 0, compiles_done_s = 0;
  double queue_p50_s = 0, queue_p99_s = 0, queue_max_s = 0;
  std::map<std::string, double> arch_finish_s;
  int actions_expected = 0, actions_completed = 0;
  int failed_tus = 0;
  int64_t worker_errors = 0;
  std::string first_error;
  // Workers whose running actions together peaked above their RAM (slots count, RAM not).
  int workers_over_ram = 0;
  double worst_ram_ratio = 0;
  double coordinator_cpu_s = 0, coordinator_peak_rss_mib = 0;

  double Ratio() const;
  bool Complete() const;
};

// `statuses`: the coordinator's record of every device action (submitted_at, started_at).
FleetReport Summarize(const FleetFacts& facts, const LowerBounds& bounds, const BuildHostRun& run,
                      const std::vector<ExecutedAction>& executed,
                      const std::vector<double>& peak_ram_in_use_mib,
                      const std::vector<farm::v1::ActionStatus>& statuses);

std::string FormatReport(const FleetReport& report);
nlohmann::json ReportJson(const FleetReport& report);

}  // namespace farm::bench
