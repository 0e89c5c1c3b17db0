#include "libfarm/process/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/output_tail.h"

extern char** environ;

namespace farm {
namespace {

std::vector<std::string> MergedEnvironment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const auto& kv : extra) {
    const std::string key = kv.substr(0, kv.find('=') + 1);
    std::erase_if(env, [&](const std::string& existing) { return existing.starts_with(key); });
    env.push_back(kv);
  }
  return env;
}

}  // namespace

std::vector<char*> NullTerminatedPointers(std::vector<std::string>& items) {
  std::vector<char*> out;
  out.reserve(items.size() + 1);
  for (auto& s : items) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

short ResetChildSignals(posix_spawnattr_t* attr) {
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(attr, &all);
  posix_spawnattr_setsigmask(attr, &none);
  return POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

namespace {

// How long a spawned child may take to reach its exec before it is looked at, and how many
// times a child found stuck short of it is replaced.
constexpr absl::Duration kExecGrace = absl::Seconds(10);
constexpr int kSpawnAttempts = 3;

std::string CommandLineOf(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/cmdline", std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// One spawn and wait; `stuck` set (and the child killed and reaped) when the child never got
// to exec within kExecGrace, for RunCommand to spawn again.
absl::StatusOr<CommandResult> RunOnce(const std::vector<std::string>& argv, absl::Duration timeout,
                                      const std::vector<std::string>& extra_env, bool& stuck) {
  stuck = false;
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return absl::InternalError(std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return absl::InternalError(std::strerror(errno));
  }
  // Its write end closes in the child at exec (O_CLOEXEC, never dup'd): EOF says it got there.
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return absl::InternalError(std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> args = argv;
  auto c_args = NullTerminatedPointers(args);
  std::vector<std::string> env = MergedEnvironment(extra_env);
  auto c_env = NullTerminatedPointers(env);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0].c_str(), &actions, nullptr, c_args.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  absl::Cleanup close_read = [&] {
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(exec_pipe[0]);
  };
  if (rc != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot run '", absl::StrJoin(argv, " "), "': ", std::strerror(rc)));
  }

  CommandResult result;
  result.pid = pid;
  pollfd fds[3] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {exec_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.stdout_text, &result.stderr_text};
  int open_fds = 2;
  const absl::Time deadline = absl::Now() + timeout;
  // Until the child is known to have exec'd, it is looked at once this passes.
  absl::Time exec_check = absl::Now() + kExecGrace;
  bool execed = false;
  bool timed_out = false;
  while (open_fds > 0) {
    const absl::Time wake = execed ? deadline : std::min(deadline, exec_check);
    const int wait_ms =
        static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(wake - absl::Now())));
    if (absl::Now() >= deadline) {
      timed_out = true;
      break;
    }
    if (!execed && absl::Now() >= exec_check) {
      if (StuckBeforeExec(pid)) {
        stuck = true;
        break;
      }
      execed = true;  // another command line: it did exec (a sibling may hold the pipe open)
      continue;
    }
    if (poll(fds, execed ? 2 : 3, wait_ms) < 0 && errno != EINTR) break;
    if (!execed && (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) != 0) execed = true;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[65536];
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  if (timed_out || stuck) kill(pid, SIGKILL);
  int status = 0;
  struct rusage usage {};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  if (stuck) return result;
  if (timed_out) {
    // What it printed last says where it stood when it was stopped.
    const std::string said = TailLines(result.stderr_text + result.stdout_text, 30);
    return absl::DeadlineExceededError(absl::StrCat(
        "'", absl::StrJoin(argv, " "), "' did not finish within ", absl::FormatDuration(timeout),
        said.empty() ? " and printed nothing" : absl::StrCat("; its last output:\n", said)));
  }
  result.exit_code = DecodeWaitStatus(status);
  result.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB
  return result;
}

}  // namespace

bool StuckBeforeExec(pid_t pid) {
  const std::string child = CommandLineOf(std::to_string(pid));
  const std::string self = CommandLineOf("self");
  if (child.empty() || self.empty() || child.size() < self.size()) return false;
  // Under qemu-user our own command line is the guest's argv, another process's the host's:
  // "<qemu>\0<program>\0" and then that argv. So the child's ends with ours.
  const size_t at = child.size() - self.size();
  return child.compare(at, self.size(), self) == 0 && (at == 0 || child[at - 1] == '\0');
}

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         absl::Duration timeout,
                                         const std::vector<std::string>& extra_env) {
  if (argv.empty()) return absl::InvalidArgumentError("RunCommand: empty argv");
  for (int attempt = 1;; ++attempt) {
    bool stuck = false;
    auto result = RunOnce(argv, timeout, extra_env, stuck);
    if (!stuck) return result;
    // Nothing of the command ran (it never got to exec), so spawning it again is safe.
    ComponentLogger("process")->warn(
        "'{}' was still a copy of this process {} after its spawn, short of exec (qemu-user "
        "can hang a multithreaded program's fork so); killed it{}",
        argv[0], absl::FormatDuration(kExecGrace),
        attempt < kSpawnAttempts ? "; spawning it again" : "");
    if (attempt >= kSpawnAttempts) {
      return absl::UnavailableError(absl::StrCat(
          "'", absl::StrJoin(argv, " "), "' never started: ", kSpawnAttempts,
          " spawns stayed short of exec. Fix: under qemu-user emulation, use a newer qemu or "
          "a native host"));
    }
  }
}

absl::StatusOr<Subprocess> Subprocess::Spawn(const std::vector<std::string>& argv,
                                             const SpawnOptions& options) {
  if (argv.empty()) return absl::InvalidArgumentError("Spawn: empty argv");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  absl::Cleanup destroy_actions = [&] { posix_spawn_file_actions_destroy(&actions); };
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (!options.log_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options.log_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  absl::Cleanup destroy_attr = [&] { posix_spawnattr_destroy(&attr); };
  short flags = ResetChildSignals(&attr);
  if (options.new_session) flags |= POSIX_SPAWN_SETSID;
  posix_spawnattr_setflags(&attr, flags);

  std::vector<std::string> args = argv;
  auto c_args = NullTerminatedPointers(args);
  std::vector<std::string> env = MergedEnvironment(options.extra_env);
  auto c_env = NullTerminatedPointers(env);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0].c_str(), &actions, &attr, c_args.data(), c_env.data());
  if (rc != 0) {
    return absl::NotFoundError(absl::StrCat("cannot start '", args[0], "': ", std::strerror(rc)));
  }
  return Subprocess(pid);
}

void Subprocess::Signal(int signal) const {
  if (!exit_code_) kill(pid_, signal);
}

std::optional<int> Subprocess::Wait(absl::Duration timeout) {
  if (exit_code_) return exit_code_;
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ = DecodeWaitStatus(status);
      return exit_code_;
    }
    if (r < 0 && errno != EINTR) return std::nullopt;
    if (absl::Now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace farm

namespace farm {

absl::StatusOr<uint64_t> ProcessStartTime(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty()) return absl::NotFoundError(absl::StrCat("no process ", pid));
  // The command name (field 2) may hold spaces and ')': fields restart after the last ')'.
  auto close = text.rfind(')');
  if (close == std::string::npos) return absl::DataLossError("malformed /proc stat");
  std::vector<std::string> fields = absl::StrSplit(text.substr(close + 2), ' ');
  // After ')' come fields 3..N; starttime is field 22, i.e. index 19 here.
  uint64_t start = 0;
  if (fields.size() < 20 || !absl::SimpleAtoi(fields[19], &start)) {
    return absl::DataLossError("malformed /proc stat");
  }
  // A zombie has exited; it only awaits reaping.
  if (fields[0] == "Z") return absl::NotFoundError(absl::StrCat("process ", pid, " exited"));
  return start;
}

}  // namespace farm
