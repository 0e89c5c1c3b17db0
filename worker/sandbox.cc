#include "worker/sandbox.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libfarm/process/path_search.h"
#include "libfarm/process/subprocess.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

enum class Op { kSymlink, kReadOnly, kWritable, kTmpfs, kHideFile, kStandIn };

struct MountOp {
  std::string path;  // inside (and, for binds, on the host)
  Op op;
  std::string target;  // kSymlink: what the link points to; kStandIn: the host file shown
};

std::string Normal(const std::string& path) {
  std::string p = fs::path(path).lexically_normal().string();
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// `path` is `dir` or lies below it.
bool Under(const std::string& path, const std::string& dir) {
  return path == dir || dir == "/" || absl::StartsWith(path, absl::StrCat(dir, "/"));
}

size_t Depth(const std::string& path) {
  return static_cast<size_t>(std::count(path.begin(), path.end(), '/'));
}

std::string Fix(const std::string& why) {
  return absl::StrCat(
      why,
      ". Fix: install bubblewrap (apt-get install bubblewrap) and allow unprivileged user "
      "namespaces (sysctl user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone=1 "
      "where it exists); under systemd, RestrictNamespaces must allow user pid net mnt ipc uts, "
      "and ProtectKernelTunables/ProtectKernelLogs must be off (the kernel refuses the "
      "sandbox's /proc over a masked one; see deploy/systemd/farm-worker.service). Or pass "
      "--no-sandbox to run actions with the worker's own rights (its token file readable, "
      "nothing between actions and the host)");
}

}  // namespace

Sandbox::Sandbox(SandboxOptions options) : options_(std::move(options)) {
  if (options_.bwrap.empty()) {
    const char* path = std::getenv("PATH");
    options_.bwrap =
        FindOnPath("bwrap", path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin").value_or("");
  }
}

std::vector<std::string> Sandbox::Namespaces(bool network) const {
  std::vector<std::string> argv = {options_.bwrap, "--unshare-user", "--uid",
                                   absl::StrCat(options_.uid), "--gid", absl::StrCat(options_.gid),
                                   // No user namespaces inside: no way back to more rights.
                                   "--disable-userns", "--unshare-pid", "--unshare-ipc",
                                   "--unshare-uts"};
  if (!network) argv.push_back("--unshare-net");
  argv.insert(argv.end(), {"--die-with-parent", "--proc", "/proc", "--dev", "/dev"});
  return argv;
}

std::vector<std::string> Sandbox::WrapImage(const std::vector<std::string>& command,
                                            const std::string& cwd,
                                            const SandboxMounts& mounts) const {
  std::vector<std::string> argv = Namespaces(mounts.network);
  const auto sorted_entries = [](const fs::path& dir) {
    std::error_code ec;
    std::vector<fs::directory_entry> entries;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      entries.push_back(*it);
    }
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.path() < b.path(); });
    return entries;
  };
  const auto show = [&argv](const fs::directory_entry& entry, const std::string& inside,
                            const char* bind) {
    std::error_code ec;
    if (entry.is_symlink(ec)) {
      argv.insert(argv.end(), {"--symlink", fs::read_symlink(entry.path(), ec).string(), inside});
    } else {
      argv.insert(argv.end(), {bind, entry.path().string(), inside});
    }
  };
  const bool all_writable = std::find(mounts.image_writable.begin(), mounts.image_writable.end(),
                                      "") != mounts.image_writable.end();
  const char* bind = all_writable ? "--bind" : "--ro-bind";
  bool has_tmp = false;    // the image's /tmp, shown as it is
  bool image_tmp = false;  // the image's /tmp, its entries shown read-only in a private one
  for (const fs::directory_entry& entry : sorted_entries(mounts.image_root)) {
    const std::string name = entry.path().filename().string();
    if (name == "proc" || name == "dev") continue;  // the kernel's, never the image's
    std::error_code ec;
    if (name == "tmp" && !all_writable && !entry.is_symlink(ec)) {
      image_tmp = true;  // the compiler's temporary files go to /tmp: it stays writable
      continue;
    }
    has_tmp = has_tmp || name == "tmp";
    show(entry, absl::StrCat("/", name), bind);
  }
  if (!has_tmp) {
    argv.insert(argv.end(), {"--tmpfs", "/tmp"});
    if (image_tmp) {
      for (const fs::directory_entry& entry : sorted_entries(fs::path(mounts.image_root) / "tmp")) {
        show(entry, absl::StrCat("/tmp/", entry.path().filename().string()), "--ro-bind");
      }
    }
  }
  if (!all_writable) {
    std::vector<std::string> writable = mounts.image_writable;
    std::sort(writable.begin(), writable.end());  // parents before what lies below them
    for (const std::string& dir : writable) {
      argv.insert(argv.end(),
                  {"--bind", (fs::path(mounts.image_root) / dir).string(), absl::StrCat("/", dir)});
    }
  }
  for (const auto& [host, inside] : mounts.image_files) {
    argv.insert(argv.end(), {"--ro-bind", host, inside});
  }
  if (!cwd.empty()) argv.insert(argv.end(), {"--chdir", cwd});
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::vector<std::string> Sandbox::Wrap(const std::vector<std::string>& command,
                                       const std::string& cwd, const SandboxMounts& mounts) const {
  if (!mounts.image_root.empty()) return WrapImage(command, cwd, mounts);
  std::vector<MountOp> ops;
  std::vector<std::string> visible;  // host trees mounted inside, for hiding what they hold
  std::vector<std::string> system;
  for (const std::string& raw : options_.system) {
    const std::string dir = Normal(raw);
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      // /bin -> usr/bin on merged-/usr systems: the same link inside.
      std::error_code ec;
      const fs::path target = fs::read_symlink(dir, ec);
      if (!ec) ops.push_back({dir, Op::kSymlink, target.string()});
    } else if (S_ISDIR(st.st_mode)) {
      ops.push_back({dir, Op::kReadOnly, ""});
      visible.push_back(dir);
      system.push_back(dir);
    }
  }
  ops.push_back({"/tmp", Op::kTmpfs, ""});
  for (const std::string& raw : mounts.private_dirs) {
    const std::string dir = Normal(raw);
    // Over /, or over or above a system directory, it would hide the system.
    if (dir.empty() || dir[0] != '/' ||
        std::any_of(system.begin(), system.end(), [&](const auto& d) { return Under(d, dir); })) {
      continue;
    }
    ops.push_back({dir, Op::kTmpfs, ""});
  }

  std::set<std::string> bound;
  auto bind = [&](const std::string& raw, Op op) {
    const std::string path = Normal(raw);
    std::error_code ec;
    if (path.empty() || path[0] != '/' || !fs::exists(path, ec)) return;
    // Already visible read-only through a system directory (a toolkit under /usr/local).
    if (op == Op::kReadOnly &&
        std::any_of(system.begin(), system.end(), [&](const auto& d) { return Under(path, d); })) {
      return;
    }
    if (!bound.insert(path).second) return;
    ops.push_back({path, op, ""});
    visible.push_back(path);
  };
  std::vector<std::string> read_only = mounts.read_only;
  // With the network, DNS: resolv.conf is often a link out of /etc (systemd-resolved's in /run).
  if (mounts.network) read_only.push_back("/etc/resolv.conf");
  for (const std::string& p : read_only) {
    bind(p, Op::kReadOnly);
    // A symlinked root (/usr/local/cuda -> cuda-13.0 elsewhere): where it leads too, for
    // tools that find their files from their own resolved path.
    std::error_code ec;
    const fs::path real = fs::canonical(p, ec);
    if (!ec) bind(real.string(), Op::kReadOnly);
  }
  for (const std::string& p : mounts.writable) bind(p, Op::kWritable);

  for (const std::string& raw : options_.hidden) {
    const std::string path = Normal(raw);
    struct stat st {};
    if (path.empty() || path[0] != '/' || ::stat(path.c_str(), &st) != 0) continue;
    if (std::none_of(visible.begin(), visible.end(),
                     [&](const auto& dir) { return Under(path, dir); })) {
      continue;  // not mounted anyway
    }
    ops.push_back({path, S_ISDIR(st.st_mode) ? Op::kTmpfs : Op::kHideFile, ""});
  }
  for (const auto& [file, raw] : mounts.stand_ins) {
    const std::string path = Normal(raw);
    if (path.empty() || path[0] != '/' || path != raw || Under(path, "/proc") ||
        Under(path, "/dev") || bound.count(path) != 0) {
      continue;
    }
    auto within = [](const std::string& p, const std::vector<std::string>& dirs) {
      return std::any_of(dirs.begin(), dirs.end(), [&](const auto& d) { return Under(p, d); });
    };
    const bool linked_system = std::any_of(ops.begin(), ops.end(), [&](const MountOp& m) {
      return m.op == Op::kSymlink && Under(path, m.path);
    });
    std::string dest = path;
    if (within(path, visible) || linked_system) {
      // Inside a host tree a new file cannot be made and one of the host's own stays: only
      // over a regular file, at its real path, since bwrap makes no mount point through a
      // symlink (/usr/local/cuda -> cuda-13.0).
      std::error_code ec;
      dest = fs::canonical(path, ec).string();
      struct stat st {};
      if (ec || ::lstat(dest.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || !within(dest, visible)) {
        continue;
      }
    }
    if (within(dest, mounts.writable) || !bound.insert(dest).second) continue;
    ops.push_back({dest, Op::kStandIn, file});
  }
  // Parents before children: a later mount covers an earlier one at or below its path.
  std::stable_sort(ops.begin(), ops.end(), [](const MountOp& a, const MountOp& b) {
    return Depth(a.path) < Depth(b.path);
  });

  std::vector<std::string> argv = Namespaces(mounts.network);
  for (const MountOp& m : ops) {
    switch (m.op) {
      case Op::kSymlink:
        argv.insert(argv.end(), {"--symlink", m.target, m.path});
        break;
      case Op::kReadOnly:
        argv.insert(argv.end(), {"--ro-bind", m.path, m.path});
        break;
      case Op::kWritable:
        argv.insert(argv.end(), {"--bind", m.path, m.path});
        break;
      case Op::kTmpfs:
        argv.insert(argv.end(), {"--tmpfs", m.path});
        break;
      case Op::kHideFile:
        argv.insert(argv.end(), {"--ro-bind", "/dev/null", m.path});
        break;
      case Op::kStandIn:
        argv.insert(argv.end(), {"--ro-bind", m.target, m.path});
        break;
    }
  }
  for (const std::string& raw : mounts.devices) {
    const std::string path = Normal(raw);
    if (path == raw && Under(path, "/dev") && path != "/dev") {
      argv.insert(argv.end(), {"--dev-bind", path, path});
    }
  }
  if (!cwd.empty()) argv.insert(argv.end(), {"--chdir", cwd});
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

absl::Status Sandbox::Probe() const {
  if (options_.bwrap.empty()) {
    return absl::FailedPreconditionError(
        Fix("bubblewrap (bwrap) is not installed, so actions cannot be sandboxed"));
  }
  auto r = RunCommand(Wrap({"true"}, "", {}), absl::Seconds(30));
  if (!r.ok()) {
    return absl::FailedPreconditionError(
        Fix(absl::StrCat("cannot run ", options_.bwrap, ": ", r.status().message())));
  }
  if (r->exit_code != 0) {
    return absl::FailedPreconditionError(Fix(absl::StrCat(
        "bubblewrap cannot make a sandbox on this host (", options_.bwrap, " exited with ",
        r->exit_code, ": ", absl::StripAsciiWhitespace(r->stderr_text), ")")));
  }
  return absl::OkStatus();
}

}  // namespace farm::worker
