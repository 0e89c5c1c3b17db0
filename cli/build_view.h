// How farmctl shows builds: tables, the build report, progress bars, and JSON (the same
// protobuf JSON mapping as the coordinator's /api/v1/).
#pragma once

#include <string>

#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

#include "absl/time/time.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/builds/build_state.h"

namespace farm::cli {

nlohmann::json ProtoToJson(const google::protobuf::Message& message);

// "1m05s", "2h03m"
std::string ShortDuration(absl::Duration d);
// "[#######.......]" `width` cells wide, '!' for failed actions.
std::string ProgressBar(const farm::v1::Shard& shard, int width);

std::string BuildsTable(const farm::v1::ListBuildsResponse& builds, absl::Time now);
// `farmctl build ID`: summary, shards, wheel, verification, failures.
std::string BuildReport(const farm::v1::Build& build, absl::Time now);
// "12 of 14 calls split (2 from the compile cache); 2 ran plain nvcc: command_line × 2"
// from farm-nvcc's reports; "" when none came.
std::string NvccCallsSummary(const farm::v1::NvccCalls& calls);
// "14 compiles: 10 on workers, 2 from the compile cache; 2 ran locally: no_worker × 2" from
// farm-cc's reports (Build.host_compiles); "" when none came. BuildReport lists the reasons'
// examples under either line.
std::string HostCompilesSummary(const farm::v1::NvccCalls& compiles);

// Where the time of a kind's calls on the farm went (issue 45), "" when none reported it:
//   "time       host cc: 49 calls on the farm, 31.20 s: run 20.10 s, scan 4.20 s, ...\n"
//   "           slowest 2.10 s src/foo.cpp (run 1.80 s, scan 0.12 s, other 0.10 s)\n" ...
// phases longest first, the `max_units` slowest units.
std::string CallTimesLines(const std::string& kind, const farm::v1::CallTimes& times,
                           size_t max_units);
// `farmctl watch ID` on a terminal: one line per shard with a bar, then the state.
std::string WatchFrame(const farm::v1::Build& build, absl::Time now);
// `farmctl watch ID` elsewhere: one line for the whole build.
std::string WatchLine(const farm::v1::Build& build);
// `farmctl submit --dry-run`: host, toolkit, source, estimate, eligible workers per shard.
std::string PlanReport(const farm::v1::BuildPlan& plan);
// "pip install --index-url http://HOST/sm75-sm90/simple/ pkg==1.0+cu130.sm75.sm90" for a
// build published to the built-in index: the wheel's arch-set index and its labelled version
// (http://HOST/simple/ for a wheel without an arch-set label); empty otherwise.
std::string PipInstallHint(const farm::v1::Build& build);

}  // namespace farm::cli
