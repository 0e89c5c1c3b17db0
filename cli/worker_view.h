// How farmctl shows workers and farm status, as tables and as JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/time/time.h"
#include "farm/v1/farm_service.pb.h"

namespace farm::cli {

// One worker: name, state, cpu_arch, os, glibc, cores, ram_bytes, disk_free_bytes,
// cuda [{version, release, sms, path}], slots, slots_in_use, labels, last_seen, ...
nlohmann::json WorkerToJson(const farm::v1::Worker& worker);
std::string WorkersTable(const farm::v1::ListWorkersResponse& workers, absl::Time now);

nlohmann::json StatusToJson(const farm::v1::GetStatusResponse& status);
std::string StatusText(const farm::v1::GetStatusResponse& status, absl::Time now);

// "3s ago", "5m ago", "2h ago"
std::string Ago(absl::Time then, absl::Time now);
// "2.5 GiB"
std::string HumanBytes(uint64_t bytes);

}  // namespace farm::cli
