// Many launchers on one coordinator: each launcher thread makes the calls farm-nvcc and farm-cc
// make for one compile (ActionService.Execute of its action, then Wait polls until it is
// terminal), against a real farm-coordinator and sleeping workers over real gRPC. Several
// builds at once, one small build started behind the big ones. What each launcher saw is
// counted: completed, failed (by status), and the calls the coordinator refused (retried).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace farm::bench {

struct LauncherLoadOptions {
  std::string work_dir;
  // Launchers (one compile each) of every big build, all started at once.
  std::vector<int> big_builds = {250, 250, 250};
  // The small build's launchers, started once the big builds' actions are queued.
  int small_build = 20;
  // Each compile's run time on a worker.
  absl::Duration action_time = absl::Milliseconds(100);
  int workers = 2;
  uint32_t slots = 8;  // per worker
  // The coordinator's --grpc-max-calls (0: its default).
  int grpc_max_calls = 0;
  // A launcher gives up (and counts a timeout) after this.
  absl::Duration launcher_timeout = absl::Minutes(10);
  // Bad input: this build's launchers (one of "big-N") are killed in their calls after
  // `abandon_after` (a user's ^C to ninja: their calls end, their actions stay queued); and
  // once the small build has started, `lose_worker` makes the first worker vanish with its
  // leases out (the coordinator is started with `worker_timeout`, so it finds it lost soon).
  std::string abandon_build;
  absl::Duration abandon_after = absl::Seconds(1);
  bool lose_worker = false;
  absl::Duration worker_timeout = absl::Seconds(3);
};

struct BuildFigures {
  std::string build_id;
  int launchers = 0;
  int completed = 0;
  std::map<std::string, int> failed;  // status code (or action state) -> launchers
  double wall_s = 0;                  // first Execute to last completion
  double p50_s = 0, p99_s = 0;        // per launcher: Execute to its completion
};

struct LauncherLoadReport {
  std::vector<BuildFigures> builds;  // the big ones, then the small one
  int launchers = 0, completed = 0;
  int peak_concurrent = 0;  // launchers with a call in progress at once
  double wall_s = 0;
  double coordinator_peak_rss_mib = 0;
  double coordinator_cpu_s = 0;
  // The small build's wall against its own work alone on the whole fleet.
  double small_alone_s = 0;
  // What the coordinator still held once every launcher was answered (within 10 s): actions
  // running or queued; -1 when it could not be asked.
  int left_running = -1, left_queued = -1;
  int worker_errors = 0;
  int64_t worker_busy_answers = 0;  // worker calls answered "busy" and sent again
  std::string first_error;

  bool AllCompleted() const { return completed == launchers && worker_errors == 0; }
  std::string Table() const;
};

absl::StatusOr<LauncherLoadReport> RunLauncherLoad(const LauncherLoadOptions& options);

}  // namespace farm::bench
