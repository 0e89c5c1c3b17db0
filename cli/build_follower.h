// Follows a build until it finishes, for `farmctl watch` and `farmctl submit --wait`: on a
// terminal one frame of per-shard progress bars redrawn in place; elsewhere (a log, CI) a
// line whenever progress changes; with --json the build as JSON whenever it changes. A
// coordinator restart on the way is waited out, saying so on stderr.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cli/cli_context.h"
#include "farm/v1/builds.pb.h"
#include "libfarm/client/build_client.h"

namespace farm::cli {

// How long a follower waits for a coordinator that answered once and then went away (a
// restart, a deploy) before it gives up; the workers wait as long.
inline constexpr absl::Duration kCoordinatorRestartPatience = absl::Minutes(10);

// Runs `call` again while it fails in a way the coordinator's coming back may fix
// (UNAVAILABLE, DEADLINE_EXCEEDED), for up to kCoordinatorRestartPatience, saying so on stderr
// once. For a follower whose coordinator has answered once: before that, UNAVAILABLE is as
// likely a wrong address or TLS CA, which waiting does not fix. `waited`: whether it had to.
absl::Status RideOutCoordinatorRestart(const std::function<absl::Status()>& call,
                                       bool* waited = nullptr);

// Returns the build as it ended.
absl::StatusOr<farm::v1::Build> FollowBuild(BuildClient& client, const std::string& id,
                                            const GlobalOptions& global, double interval_seconds);

}  // namespace farm::cli
