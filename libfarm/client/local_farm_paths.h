// Where a local farm (farmctl up) keeps its files, and how clients find the current one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/tls/client_tls.h"

namespace farm {

// ${XDG_STATE_HOME:-~/.local/state}/wheelfarm
std::string WheelfarmStateHome();

// The data dir `farmctl up` uses without --data-dir.
std::string DefaultLocalFarmDir();

struct LocalFarmProcess {
  std::string role;  // "coordinator" or "worker"
  std::string name;
  int pid = 0;
  uint64_t start_time = 0;  // see ProcessStartTime
};

// D/farm.json: what `farmctl up` started and how to reach it.
struct LocalFarmRecord {
  std::string data_dir;
  std::string grpc_address;
  std::string http_address;
  std::string token_file;
  // `farmctl up --tls`: the farm's CA and farmctl's client certificate (ca_file empty: none).
  ClientTlsFiles tls;
  std::vector<LocalFarmProcess> processes;
};

std::string LocalFarmRecordPath(const std::string& data_dir);
absl::Status WriteLocalFarmRecord(const LocalFarmRecord& record);
absl::StatusOr<LocalFarmRecord> ReadLocalFarmRecord(const std::string& data_dir);

// The current local farm: the one bare farmctl and farm-nvcc calls talk to (its data dir),
// if any. Kept in ${XDG_STATE_HOME:-~/.local/state}/wheelfarm/current.
std::optional<std::string> CurrentLocalFarmDir();

// Makes `data_dir` the current local farm unless another local farm that is still running
// already is: starting a second farm never redirects the clients of the first. Returns the
// data dir that is current afterwards.
absl::StatusOr<std::string> ClaimCurrentLocalFarm(const std::string& data_dir);

// Clears the pointer if it names `data_dir`; another farm's pointer stays.
void ReleaseCurrentLocalFarm(const std::string& data_dir);

// True if the farm recorded in `data_dir` has its coordinator running.
bool LocalFarmIsRunning(const std::string& data_dir);
// The same for a record already read.
bool CoordinatorIsRunning(const LocalFarmRecord& record);

// True if `p` is still the very process that was started (pid and start time match).
bool IsRunning(const LocalFarmProcess& p);

}  // namespace farm
