// Starting and reaping child processes without a shell.
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace farm {

struct CommandResult {
  int exit_code = -1;       // exit status, or 128 + signal when killed
  std::string stdout_text;  // captured output
  std::string stderr_text;
  uint64_t peak_rss_bytes = 0;  // the child's peak resident set (ru_maxrss), 0 if unknown
  pid_t pid = 0;                // the child's process id (some tools write theirs into outputs)
};

// Whether `pid` is still the copy of this process that fork made: it has not reached exec.
// Under qemu-user a multithreaded guest's fork child can hang there for good
// (mamba-org/mamba#1611); a child that did exec has another command line (under qemu-user,
// the host's view of a child's ends with the guest's view of ours until it execs).
bool StuckBeforeExec(pid_t pid);

// Runs argv[0] (looked up on PATH) to completion and captures its output. A command still
// running after `timeout` is killed and reported as DEADLINE_EXCEEDED. `extra_env` entries
// ("K=V") override the parent's environment. A child still short of exec after 10 s
// (StuckBeforeExec) is killed and spawned again, at most 3 times in all.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         absl::Duration timeout = absl::Seconds(60),
                                         const std::vector<std::string>& extra_env = {});

struct SpawnOptions {
  // Where stdout and stderr go (appended). Empty: inherit the parent's.
  std::string log_path;
  // Start a new session so the child outlives the parent's terminal and process group.
  bool new_session = false;
  // Extra environment entries "K=V" appended to the parent's environment.
  std::vector<std::string> extra_env;
};

// A started child process. Destroying it does not stop the child.
class Subprocess {
 public:
  static absl::StatusOr<Subprocess> Spawn(const std::vector<std::string>& argv,
                                          const SpawnOptions& options = {});

  pid_t pid() const { return pid_; }
  // Sends `signal` (SIGTERM, SIGKILL, ...). Not an error if the child already exited.
  void Signal(int signal) const;
  // Waits up to `timeout` for exit and returns the exit code (128 + signal when killed), or
  // nullopt if it is still running.
  std::optional<int> Wait(absl::Duration timeout);

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  std::optional<int> exit_code_;
};

// Decodes a waitpid status into an exit code (128 + signal when killed by a signal).
int DecodeWaitStatus(int status);

// argv/envp for posix_spawn: pointers into `items` (which must outlive them), then null.
std::vector<char*> NullTerminatedPointers(std::vector<std::string>& items);

// Makes a child start with default signal dispositions and an empty mask, whatever the
// parent's are. Returns the flags to pass to posix_spawnattr_setflags (add your own).
short ResetChildSignals(posix_spawnattr_t* attr);

}  // namespace farm

namespace farm {

// The kernel's start time of `pid` (clock ticks since boot, /proc/PID/stat field 22), used
// to tell a process we started from an unrelated one that later got the same pid.
absl::StatusOr<uint64_t> ProcessStartTime(pid_t pid);

}  // namespace farm
