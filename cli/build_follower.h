// Follows a build until it finishes, for `farmctl watch` and `farmctl submit --wait`: on a
// terminal one frame of per-shard progress bars redrawn in place; elsewhere (a log, CI) a
// line whenever progress changes; with --json the build as JSON whenever it changes.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cli/cli_context.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/client/build_client.h"

namespace farm::cli {

// Returns the build as it ended.
absl::StatusOr<farm::v1::Build> FollowBuild(BuildClient& client, const std::string& id,
                                            const GlobalOptions& global, double interval_seconds);

}  // namespace farm::cli
