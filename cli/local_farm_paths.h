// Where a local farm (farmctl up) keeps its files, and how clients find the current one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/tls/client_tls.h"

namespace farm::cli {

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

// The farm `farmctl up` last started (its data dir), if any.
std::optional<std::string> CurrentLocalFarmDir();
absl::Status SetCurrentLocalFarmDir(const std::string& data_dir);

// True if `p` is still the very process that was started (pid and start time match).
bool IsRunning(const LocalFarmProcess& p);

}  // namespace farm::cli
