// A thousand launchers on one coordinator (bench/run_launcher_load.sh): each launcher thread
// makes one compile's calls (Execute, then Wait polls) against a real farm-coordinator and
// sleeping workers; several big builds at once and a small one behind them. Prints per build
// what its launchers saw (completed, failed by status), the coordinator's peak RSS and CPU,
// and the small build's wall against its own work alone.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "absl/strings/str_cat.h"
#include "bench/launcher_load.h"

int main(int argc, char** argv) {
  farm::bench::LauncherLoadOptions options;
  int action_ms = 100;
  CLI::App app{"launcher_load: many launchers' calls against one coordinator"};
  app.add_option("--big", options.big_builds, "launchers of each big build (repeatable)")
      ->capture_default_str();
  app.add_option("--small", options.small_build, "launchers of the small build behind them")
      ->capture_default_str();
  app.add_option("--action-ms", action_ms, "each compile's run time on a worker")
      ->capture_default_str();
  app.add_option("--workers", options.workers)->capture_default_str();
  app.add_option("--slots", options.slots, "per worker")->capture_default_str();
  app.add_option("--grpc-max-calls", options.grpc_max_calls, "the coordinator's (0: its default)")
      ->capture_default_str();
  app.add_option("--abandon-build", options.abandon_build,
                 "bad input: this big build's launchers (big-1, ...) are killed 1 s into their "
                 "calls, their actions left queued");
  app.add_flag("--lose-worker", options.lose_worker,
               "bad input: the first worker vanishes with its leases out once the small build has "
               "started");
  CLI11_PARSE(app, argc, argv);
  options.action_time = absl::Milliseconds(action_ms);
  options.work_dir =
      (std::filesystem::temp_directory_path() / absl::StrCat("launcher-load-", getpid())).string();
  auto report = farm::bench::RunLauncherLoad(options);
  if (!report.ok()) {
    std::cerr << "launcher_load: " << report.status() << "\n";
    return 1;
  }
  std::cout << report->Table();
  return report->AllCompleted() ? 0 : 1;
}
