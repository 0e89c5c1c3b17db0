// Fleet simulator: a wheel build's DAG (a workload profile from bench/profiles/) replayed
// through a real farm-coordinator by a simulated build host and N simulated workers over
// real gRPC, in compressed time. Prints makespan against its lower bound, which bound binds,
// fleet utilization, queue waits, per-arch finish times and the coordinator's CPU and RSS.
// Usage: fleet_sim --profile FILE [--hosts N] [--mix TYPE=W,...] [--ms-per-second X] [--json]
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "bench/fleet_sim_run.h"

int main(int argc, char** argv) {
  farm::bench::FleetSimOptions options;
  bool json = false;
  CLI::App app{"fleet_sim: a build's DAG through a real coordinator and a simulated fleet"};
  app.add_option("--profile", options.profile_path, "workload profile (bench/profiles/*.json)")
      ->required();
  app.add_option("--hosts", options.hosts, "simulated worker hosts")->capture_default_str();
  app.add_option("--mix", options.mix, "instance types by weight: m8g.4xlarge, m8g.8xlarge, grace")
      ->capture_default_str();
  app.add_option("--ms-per-second", options.ms_per_second,
                 "real milliseconds per simulated second of compile")
      ->capture_default_str();
  app.add_option("--repeat", options.repeat, "multiply every TU class's count")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "build order shuffle")->capture_default_str();
  app.add_option("--ninja-order", options.ninja_order,
                 "the build host's: shuffled, or longest-first (heaviest CUDA TUs started first)")
      ->capture_default_str();
  app.add_option("--jobs", options.jobs, "ninja -j on the build host (0: the recipe's rule)")
      ->capture_default_str();
  app.add_flag("--farm-jobs", options.farm_jobs,
               "ninja -j by the recipes' {farm_jobs} rule (the fleet's slots and the host's RAM)");
  app.add_option("--queue-order", options.queue_order, "the coordinator's: longest-first, fifo")
      ->capture_default_str();
  app.add_option("--memory-aware", options.memory_aware, "the coordinator's (true/false)")
      ->capture_default_str();
  app.add_option("--learn-first", options.learn_first,
                 "replay the build once, unmeasured, so the coordinator learns its costs")
      ->capture_default_str();
  app.add_option("--cost-hints", options.cost_hints,
                 "send the profile's cost_hints (as a recipe's FARM_NVCC_COST_HINTS) for units "
                 "the farm has learnt nothing of (true/false)")
      ->capture_default_str();
  app.add_option("--host-compiles-on-farm", options.host_scan_fraction,
                 "run the host compiles on the farm (farm-cc), keeping this fraction of each on "
                 "the build host as its dependency scan (0.05; 0: the build host compiles them)")
      ->capture_default_str();
  app.add_option("--local-order", options.local_order,
                 "the build host's local job slots: priority (a unit the farm learnt to be long "
                 "first, then steps closing a unit's work, as LocalJobSlot serves them) or "
                 "as-they-come")
      ->check(CLI::IsMember({"priority", "as-they-come"}))
      ->capture_default_str();
  app.add_option("--work-dir", options.work_dir, "scratch (default: a temp dir)");
  app.add_flag("--keep-work-dir", options.keep_work_dir, "keep the coordinator's data and log");
  app.add_flag("--json", json, "print the figures as one JSON object");
  CLI11_PARSE(app, argc, argv);
  if (options.work_dir.empty()) {
    options.work_dir =
        (std::filesystem::temp_directory_path() / absl::StrCat("fleet-sim-", getpid())).string();
  }
  auto report = farm::bench::RunFleetSim(options);
  if (!report.ok()) {
    std::cerr << "fleet_sim: " << report.status().message() << "\n";
    return 1;
  }
  if (json) {
    std::cout << farm::bench::ReportJson(*report).dump(2) << "\n";
  } else {
    std::cout << farm::bench::FormatReport(*report);
  }
  return report->Complete() ? 0 : 1;
}
