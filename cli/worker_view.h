// How farmctl shows workers and farm status, as tables and as JSON.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/time/time.h"
#include "farm/v1/builds.pb.h"
#include "farm/v1/farm_service.pb.h"

namespace farm::cli {

// Running actions by worker name (BuildService.ListActions with state RUNNING).
using RunningByWorker = std::map<std::string, std::vector<farm::v1::ActionEntry>>;
RunningByWorker GroupByWorker(const farm::v1::ListActionsResponse& running);

// One worker: name, state, cpu_arch, os, glibc, cores, ram_bytes, disk_free_bytes,
// cuda [{version, release, sms, path}], python [{version, release, path}],
// gpus [{name, sm, memory_bytes, driver_cuda_version, declared}], slots, slots_in_use,
// load (slots_in_use / slots), current_actions [{action_id, build_id, shard, started_at}], labels,
// sandboxed (its actions run in the bubblewrap sandbox), last_seen, ...
nlohmann::json WorkerToJson(const farm::v1::Worker& worker,
                            const std::vector<farm::v1::ActionEntry>& running = {});
std::string WorkersTable(const farm::v1::ListWorkersResponse& workers, absl::Time now,
                         const RunningByWorker& running = {});

nlohmann::json StatusToJson(const farm::v1::GetStatusResponse& status);
std::string StatusText(const farm::v1::GetStatusResponse& status, absl::Time now);

// "3s ago", "5m ago", "2h ago"
std::string Ago(absl::Time then, absl::Time now);
// "2.5 GiB"
std::string HumanBytes(uint64_t bytes);

}  // namespace farm::cli
