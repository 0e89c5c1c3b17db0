#include "worker/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "libfarm/process/path_search.h"
#include "libfarm/process/subprocess.h"

namespace farm::worker {
namespace {

// Where the program is: argv[0] as given if it has a '/' (relative to `cwd`), else looked
// up on the action's own PATH (not the worker's); nullopt when it is not there. Sandboxed
// commands see host paths at the same place, so the answer holds inside too.
std::optional<std::string> ResolveProgram(const std::string& program, const std::string& cwd,
                                          const std::map<std::string, std::string>& env) {
  if (program.find('/') != std::string::npos) {
    const std::string full = program[0] == '/' ? program : absl::StrCat(cwd, "/", program);
    return ::access(full.c_str(), X_OK) == 0 ? std::optional<std::string>(full) : std::nullopt;
  }
  auto path = env.find("PATH");
  return FindOnPath(program, path != env.end() ? path->second : "/usr/local/bin:/usr/bin:/bin");
}

}  // namespace

absl::StatusOr<CommandOutcome> RunCommandInDirectory(const CommandSpec& spec,
                                                     const std::atomic<bool>& cancel) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("empty argv");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  absl::Cleanup destroy_actions = [&] { posix_spawn_file_actions_destroy(&actions); };
  posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, spec.stdout_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, spec.stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  absl::Cleanup destroy_attr = [&] { posix_spawnattr_destroy(&attr); };
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, ResetChildSignals(&attr) | POSIX_SPAWN_SETPGROUP);

  const bool image = spec.sandbox != nullptr && !spec.mounts.image_root.empty();
  const std::optional<std::string> program = image
                                                 ? std::optional<std::string>(spec.argv[0])
                                                 : ResolveProgram(spec.argv[0], spec.cwd, spec.env);
  if (!program.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("cannot start '", spec.argv[0], "': ", std::strerror(ENOENT)));
  }
  // bwrap finds the program the same way inside (execvp on the command's PATH, from `cwd`).
  std::vector<std::string> args =
      spec.sandbox != nullptr
          ? spec.sandbox->Wrap(spec.argv, image ? spec.image_cwd : spec.cwd, spec.mounts)
          : spec.argv;
  const std::string& executable = spec.sandbox != nullptr ? args[0] : *program;
  std::vector<std::string> env;
  for (const auto& [k, v] : spec.env) env.push_back(absl::StrCat(k, "=", v));
  auto c_args = NullTerminatedPointers(args);
  auto c_env = NullTerminatedPointers(env);
  const absl::Time start = absl::Now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, executable.c_str(), &actions, &attr, c_args.data(), c_env.data());
  if (rc != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot start '", executable, "': ", std::strerror(rc)));
  }

  CommandOutcome outcome;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  const absl::Time deadline = start + spec.timeout;
  bool killed = false;
  absl::Time next_watch = start + spec.watch_period;
  int status = 0;
  rusage usage{};
  while (true) {
    // Look without reaping: while the leader is a zombie its pid still names the group.
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      break;
    }
    const absl::Time now = absl::Now();
    if (!killed && (now >= deadline || cancel.load())) {
      outcome.timed_out = now >= deadline;
      outcome.cancelled = !outcome.timed_out;
      kill(-pid, SIGKILL);
      killed = true;
    }
    if (!killed && spec.watch && now >= next_watch) {
      next_watch = now + spec.watch_period;
      if (std::optional<std::string> reason = spec.watch(); reason.has_value()) {
        outcome.killed_for = *std::move(reason);
        kill(-pid, SIGKILL);
        killed = true;
      }
    }
    // Sleep until the child exits (pidfd readable) or it is time to look at the clock.
    pollfd p{pidfd, POLLIN, 0};
    if (pidfd >= 0) {
      poll(&p, 1, 100);
    } else {
      usleep(5000);
    }
  }
  if (pidfd >= 0) close(pidfd);
  // Compilers the command left behind in its group go with it (in a sandbox they died with
  // its PID namespace already).
  kill(-pid, SIGKILL);
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  outcome.exit_code = DecodeWaitStatus(status);
  outcome.wall_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  outcome.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                        static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  outcome.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  return outcome;
}

}  // namespace farm::worker
