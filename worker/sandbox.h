// The sandbox actions run in: bubblewrap (bwrap, as sccache-dist uses) turns a command and
// the paths it may use into an argv. Inside: its own user, PID, IPC and UTS namespaces, an
// unprivileged uid/gid (65534), no network unless asked for, the system directories
// read-only, a private /tmp, and of the host filesystem only what the caller mounts. The
// worker's own files (token, config, blob cache, other scratch dirs) are hidden even where
// they lie under a mounted directory. The PID namespace ends with the command: every process
// it started dies when it exits or is killed, and --die-with-parent kills the whole sandbox
// when the worker dies.
//
// Mounted host paths appear at the same path inside, so paths in commands, outputs and the
// action cache are the same as without a sandbox.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace farm::worker {

// What one command may use besides the system directories.
struct SandboxMounts {
  std::vector<std::string> read_only;  // host paths, visible read-only
  std::vector<std::string> writable;   // host paths, visible read-write
  // Empty private directories (tmpfs) at these paths, e.g. a build's $HOME.
  std::vector<std::string> private_dirs;
  bool network = false;  // the host's network (wheel builds' pip and git); else loopback only
  // Host device nodes shown at their path (a smoke test's /dev/nvidia*); only under /dev.
  std::vector<std::string> devices;
  // Files shown read-only at a path of their own: {host file, path inside}. Each is shown
  // only where the sandbox has nothing of the host's: outside every mounted directory, or
  // over a regular file of a read-only one; never inside a writable one or /proc, /dev.
  std::vector<std::pair<std::string, std::string>> stand_ins;
  // A filesystem image (farm-cc's host compiles, Action.working_directory): the sandbox's root
  // is this host directory's top-level entries, read-only but for `image_writable`, with a
  // private /tmp (the image's own /tmp entries shown read-only in it), and nothing of the host's
  // system at all; the other fields above are ignored. Read-only, so an action cannot change
  // the files the worker links into the next one (BlobCache::LinkAt). `image_files` are host
  // files shown read-only at their path inside (the toolchain, prepared once per worker).
  std::string image_root;
  // Directories of the image (relative, as under image_root) the command may write: its
  // outputs'. "" is the whole image.
  std::vector<std::string> image_writable;
  std::vector<std::pair<std::string, std::string>> image_files;  // {host file, path inside}
};

struct SandboxOptions {
  std::string bwrap;  // path of the bwrap binary
  // Host directories (or symlinks to them) every command sees read-only at the same path.
  std::vector<std::string> system = {"/usr",   "/bin",   "/sbin",   "/lib",
                                     "/lib32", "/lib64", "/libx32", "/etc"};
  // Host paths never visible inside, even under a mounted directory: a directory becomes an
  // empty tmpfs, a file /dev/null. Mounts below a hidden directory are still made.
  std::vector<std::string> hidden;
  uint32_t uid = 65534;  // nobody/nogroup
  uint32_t gid = 65534;
};

class Sandbox {
 public:
  // `options.bwrap` empty: looked up on PATH (Probe says if it is missing).
  explicit Sandbox(SandboxOptions options);

  // The argv that runs `command` inside the sandbox with `mounts`, in `cwd` (a mounted
  // directory, or with `mounts.image_root` a directory inside the image; empty: bwrap's
  // default). argv[0] is bwrap; the command keeps the environment
  // it is started with. Mounts are made parents first, so a writable directory inside a hidden
  // or read-only one is still there and writable.
  std::vector<std::string> Wrap(const std::vector<std::string>& command, const std::string& cwd,
                                const SandboxMounts& mounts) const;

  // Runs `true` in the sandbox, as actions will run: OK when this host can sandbox, else
  // FAILED_PRECONDITION saying why and how to fix it (or to pass --no-sandbox).
  absl::Status Probe() const;

  const std::string& bwrap() const { return options_.bwrap; }

 private:
  // bwrap and its namespaces, /proc and /dev: what every sandbox starts with.
  std::vector<std::string> Namespaces(bool network) const;
  std::vector<std::string> WrapImage(const std::vector<std::string>& command,
                                     const std::string& cwd, const SandboxMounts& mounts) const;

  SandboxOptions options_;
};

}  // namespace farm::worker
