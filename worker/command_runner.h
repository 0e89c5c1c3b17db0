// Runs one action's command inside its scratch directory: a clean environment, output to
// files, a timeout, cancellation, and the resources it used.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/sandbox.h"

namespace farm::worker {

struct CommandOutcome {
  int exit_code = -1;  // 128 + signal when killed
  bool timed_out = false;
  bool cancelled = false;
  double wall_seconds = 0;
  double cpu_seconds = 0;  // user + system, including waited-for children
  uint64_t peak_rss_bytes = 0;
  std::string killed_for;  // the watch's reason, when it stopped the command
};

struct CommandSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // the command's whole environment
  std::string cwd;
  std::string stdout_path;
  std::string stderr_path;
  absl::Duration timeout = absl::Hours(1);
  // Run inside this sandbox (null: directly, with the worker's rights), seeing `mounts`
  // (which must include `cwd`).
  const Sandbox* sandbox = nullptr;
  SandboxMounts mounts;
  // With `mounts.image_root`: where the command runs inside the image (`cwd` is then the host
  // directory bwrap starts in), and argv[0] is the image's, not looked up on this host.
  std::string image_cwd;
  // Asked about every `watch_period` while the command runs: a reason to stop it (killed, as
  // on a timeout; CommandOutcome.killed_for), or nullopt to let it go on.
  std::function<std::optional<std::string>()> watch;
  absl::Duration watch_period = absl::Seconds(1);
};

// The command runs in its own process group, so a timeout or cancellation also stops the
// compilers it started; in a sandbox, its own PID namespace also takes the processes that
// left the group (setsid) when it exits or is killed. NOT_FOUND when the program cannot be
// started.
absl::StatusOr<CommandOutcome> RunCommandInDirectory(const CommandSpec& spec,
                                                     const std::atomic<bool>& cancel);

}  // namespace farm::worker
