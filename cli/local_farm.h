// `farmctl up` / `farmctl down`: a coordinator and N workers on loopback, started in the
// background from the binaries beside farmctl, and stopped again by pid and start time.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libfarm/client/local_farm_paths.h"

namespace farm::cli {

struct LocalFarmOptions {
  std::string data_dir;  // absolute
  int workers = 2;
  std::string listen = "127.0.0.1:7420";
  std::string http_listen = "127.0.0.1:7421";
  // Given on the command line: used as they are. Defaults give way to a free port when
  // something (say another local farm) holds them, and StartedFarm::notes says so.
  bool listen_given = false;
  bool http_listen_given = false;
  std::string worker_timeout = "10s";
  uint32_t slots_per_worker = 0;  // 0: this machine's slots shared among the workers
  absl::Duration ready_timeout = absl::Seconds(90);
  // --tls: a CA of the farm's own in D/tls issues the coordinator's certificate and one
  // client certificate per worker and for farmctl; gRPC is mutual TLS, HTTP is HTTPS.
  bool tls = false;
};

struct StartedFarm {
  LocalFarmRecord record;
  bool already_running = false;
  // The current local farm afterwards: this one, or another that was running already.
  std::string current_dir;
  // What the user should know about how it was started, e.g. a default port that was taken.
  std::vector<std::string> notes;
};

absl::StatusOr<StartedFarm> StartLocalFarm(const LocalFarmOptions& options);

// Stops every process the record lists that is still the one farmctl started. Returns how
// many were stopped. NOT_FOUND when no farm is recorded in `data_dir`.
absl::StatusOr<int> StopLocalFarm(const std::string& data_dir);

}  // namespace farm::cli
