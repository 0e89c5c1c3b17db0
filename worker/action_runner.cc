#include "worker/action_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/disk/disk_space.h"
#include "libfarm/disk/disk_usage.h"
#include "libfarm/file_tree/footprint.h"
#include "libfarm/files/relative_path.h"
#include "libfarm/logging/logger.h"
#include "libfarm/nvcc/device_job.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/process_table.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/text/utf8.h"
#include "libfarm/time/phase_timeline.h"
#include "libfarm/units/byte_size.h"
#include "worker/command_runner.h"
#include "worker/file_tree_image.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

constexpr size_t kTailBytes = 4096;
// While the disk is below half its reserve, an action that has written more than this since
// it started is stopped: the one filling it, not every compile that writes an object.
constexpr uint64_t kGrowthAllowance = uint64_t{64} << 20;
constexpr char kMaxActionDiskSetting[] = "farm-worker --max-action-disk";

// The last kTailBytes of the file, starting on a character: 3 bytes more are read so that
// a cut through a multi-byte character (gcc's quotes are three) can drop its rest.
std::string Tail(const std::string& path) {
  constexpr std::streamoff kRead = kTailBytes + 3;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > kRead ? size - kRead : 0;
  in.seekg(start);
  std::string out(static_cast<size_t>(size - start), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return std::string(Utf8Tail(out, kTailBytes));
}

// A declared output is taken only if it is a regular file reached without symlinks, so an
// action cannot make the worker upload a file from outside its scratch directory.
bool IsPlainFileInside(const fs::path& root, const std::string& relative) {
  fs::path current = root;
  for (const auto& part : fs::path(relative)) {
    current /= part;
    struct stat st {};
    if (lstat(current.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return false;
  }
  struct stat st {};
  return lstat(current.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// remove_all, after making every directory writable again: an action may leave a read-only
// directory behind, which would keep a worker that is not root from removing what is in it.
void RemoveTree(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(dir, ec))) {
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
  }
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    ec.clear();
  }
  fs::remove_all(dir, ec);
}

// SIGKILLs this user's bwrap processes whose mounts lie under `scratch_root`: sandboxes of an
// earlier run of this worker. --die-with-parent kills them with the worker; this is for a
// sandbox that outlived it anyway. Killing bwrap ends its PID namespace and all inside.
int KillSandboxesUnder(const std::string& scratch_root) {
  const std::string prefix = scratch_root + "/";
  int killed = 0;
  for (const ProcessEntry& p : ListProcesses()) {
    if (p.uid != ::geteuid() || fs::path(p.args[0]).filename() != "bwrap") continue;
    if (std::any_of(p.args.begin(), p.args.end(),
                    [&](const std::string& a) { return absl::StartsWith(a, prefix); }) &&
        ::kill(p.pid, SIGKILL) == 0) {
      ++killed;
    }
  }
  return killed;
}

// For line info: an empty file of each stamp's size and mtime, which the sandbox shows at the
// stamp's path (where the worker has nothing of its own there), so ptxas stamps the cubin as
// the submitting host's ptxas did. Sparse: the size costs no disk.
absl::Status MakeStandIns(const farm::v1::Action& action, const fs::path& dir,
                          SandboxMounts& mounts) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
  }
  for (int i = 0; i < action.source_stamps_size(); ++i) {
    const farm::v1::SourceStamp& stamp = action.source_stamps(i);
    const std::string file = (dir / absl::StrCat(i)).string();
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    bool ok = fd >= 0 && ::ftruncate(fd, static_cast<off_t>(stamp.size_bytes())) == 0;
    if (ok) {
      const struct timespec times[2] = {{stamp.mtime_seconds(), 0}, {stamp.mtime_seconds(), 0}};
      ok = ::futimens(fd, times) == 0;
    }
    if (fd >= 0) ::close(fd);
    if (!ok) {
      return absl::InternalError(
          absl::StrCat("cannot make the stand-in for '", stamp.path(), "' at ", file));
    }
    mounts.stand_ins.emplace_back(file, stamp.path());
  }
  return absl::OkStatus();
}

absl::Status CheckPaths(const farm::v1::Action& action) {
  for (const auto& in : action.inputs()) {
    if (absl::Status s = ValidateRelativePath(in.path()); !s.ok()) return s;
  }
  for (const auto& out : action.output_paths()) {
    if (absl::Status s = ValidateRelativePath(out); !s.ok()) return s;
  }
  if (action.source_stamps_size() > static_cast<int>(kMaxSourceStamps)) {
    return absl::InvalidArgumentError(absl::StrCat(
        action.source_stamps_size(), " source stamps (the limit is ", kMaxSourceStamps, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

ActionRunner::ActionRunner(std::string scratch_root, BlobCache* cache, CasClient* cas,
                           std::map<std::string, std::string> cuda_roots, const Sandbox* sandbox,
                           HostToolchains* toolchains, ActionDiskLimits limits)
    : scratch_root_(std::move(scratch_root)),
      cache_(cache),
      cas_(cas),
      cuda_roots_(std::move(cuda_roots)),
      sandbox_(sandbox),
      toolchains_(toolchains),
      limits_(std::move(limits)),
      claims_(scratch_root_, limits_.reserve_bytes,
              limits_.free_bytes ? limits_.free_bytes : DiskClaims::FreeBytesFn(FreeBytes)) {}

absl::Status ActionRunner::ClaimLayout(uint64_t bytes, DiskClaims::Claim& claim) {
  if (bytes > limits_.max_action_bytes) {
    return CheckFootprint("the action's inputs", Footprint{.bytes = bytes},
                          limits_.max_action_bytes, kMaxActionDiskSetting);
  }
  auto taken = claims_.Take(bytes);
  if (!taken.ok()) return absl::UnavailableError(taken.status().message());
  claim = *std::move(taken);
  return absl::OkStatus();
}

std::function<std::optional<std::string>()> ActionRunner::DiskWatch(
    std::vector<std::string> paths) {
  const uint64_t start = DiskUsage(paths);
  return [this, paths = std::move(paths), start]() -> std::optional<std::string> {
    const uint64_t used = DiskUsage(paths);
    if (used > limits_.max_action_bytes) {
      return absl::StrCat("the action wrote ", FormatByteSize(used),
                          " (its inputs' copies, outputs and logs); this worker's limit is ",
                          FormatByteSize(limits_.max_action_bytes), " (", kMaxActionDiskSetting,
                          ")");
    }
    const int64_t headroom = claims_.HeadroomBytes();
    if (used > start + kGrowthAllowance &&
        headroom < -static_cast<int64_t>(limits_.reserve_bytes / 2)) {
      return absl::StrCat("the worker's disk fell below half the free space it keeps (",
                          FormatByteSize(limits_.reserve_bytes),
                          ", farm-worker --disk-reserve) while the action wrote ",
                          FormatByteSize(used - start));
    }
    return std::nullopt;
  };
}

absl::Status ActionRunner::LayOutImage(const farm::v1::Action& action, const std::string& scratch,
                                       SandboxMounts& mounts, DiskClaims::Claim* claim) {
  if (sandbox_ == nullptr || toolchains_ == nullptr) {
    return absl::FailedPreconditionError(
        "this worker runs without a sandbox (--no-sandbox), so it cannot run a filesystem image "
        "action");
  }
  auto toolchain = toolchains_->Prepare(action.toolchain());
  if (!toolchain.ok()) return toolchain.status();
  auto inputs = ReadFileTree(action.input_tree(), cache_);
  if (!inputs.ok()) return inputs.status();
  if (absl::Status s = CheckTreesAgree((*toolchain)->tree, *inputs); !s.ok()) return s;
  // The worker makes these directories itself: never through a link the client named.
  std::vector<std::string> made = {action.working_directory().substr(1)};
  for (const auto& out : action.output_paths()) made.push_back(out);
  if (absl::Status s = CheckNotThroughLinks(made, (*toolchain)->tree, *inputs); !s.ok()) {
    return s;
  }
  // Every file of the input tree becomes a new file here (a copy, or the first linked copy of
  // its content), so its footprint is what the layout may write.
  if (claim != nullptr) FARM_RETURN_IF_ERROR(ClaimLayout(FootprintOf(*inputs).bytes, *claim));
  auto files = MountPointsFor((*toolchain)->tree, (*toolchain)->root, scratch);
  if (!files.ok()) return files.status();
  // The action writes only its outputs: their directories are all of the image it may change.
  std::vector<std::string> writable;
  for (const auto& out : action.output_paths()) {
    writable.push_back(fs::path(out).parent_path().string());
  }
  std::sort(writable.begin(), writable.end());
  writable.erase(std::unique(writable.begin(), writable.end()), writable.end());
  if (absl::Status s = LayOutFileTree(*inputs, scratch, cache_, writable); !s.ok()) return s;
  std::error_code ec;
  fs::create_directories(fs::path(scratch) / action.working_directory().substr(1), ec);
  for (const std::string& dir : writable) fs::create_directories(fs::path(scratch) / dir, ec);
  mounts.image_root = scratch;
  mounts.image_files = *std::move(files);
  mounts.image_writable = std::move(writable);
  return absl::OkStatus();
}

absl::Status ActionRunner::ClearScratchRoot() {
  if (const int killed = KillSandboxesUnder(scratch_root_); killed > 0) {
    ComponentLogger("worker")->warn("killed {} sandbox process(es) left by an earlier run", killed);
  }
  std::error_code ec;
  int removed = 0;
  for (fs::directory_iterator it(scratch_root_, ec), end; !ec && it != end; it.increment(ec)) {
    RemoveTree(it->path());
    ++removed;
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot empty the scratch directory ", scratch_root_, ": ", ec.message(),
                     ". Fix: give the worker a writable --work-dir"));
  }
  if (removed > 0) {
    ComponentLogger("worker")->info("removed {} scratch director{} left by an earlier run in {}",
                                    removed, removed == 1 ? "y" : "ies", scratch_root_);
  }
  return absl::OkStatus();
}

farm::v1::Completion ActionRunner::Execute(const farm::v1::Lease& lease,
                                           const std::atomic<bool>& cancel) {
  const fs::path base = fs::path(scratch_root_) / lease.lease_id();
  struct RemoveScratch {
    fs::path dir;
    ~RemoveScratch() { RemoveTree(dir); }
  } cleanup{base};
  return Run(lease, lease.action(), base.string(), cancel, nullptr, {}, /*bounded=*/true);
}

farm::v1::Completion ActionRunner::RunIn(const farm::v1::Lease& lease,
                                         const farm::v1::Action& action,
                                         const std::string& base_dir,
                                         const std::atomic<bool>& cancel, OutputFollower* follower,
                                         SandboxMounts mounts) {
  return Run(lease, action, base_dir, cancel, follower, std::move(mounts), /*bounded=*/false);
}

farm::v1::Completion ActionRunner::Run(const farm::v1::Lease& lease, const farm::v1::Action& action,
                                       const std::string& base_dir, const std::atomic<bool>& cancel,
                                       OutputFollower* follower, SandboxMounts mounts,
                                       bool bounded) {
  auto log = ComponentLogger("worker");
  PhaseTimeline timeline;
  farm::v1::Completion completion;
  completion.set_lease_id(lease.lease_id());
  completion.set_action_id(lease.action_id());
  auto* result = completion.mutable_result();

  // The coordinator checked the paths too; a worker trusts no one with its filesystem.
  if (absl::Status s = CheckPaths(action); !s.ok()) {
    result->set_exit_code(126);
    result->set_stderr_tail(absl::StrCat("wheelfarm: refused to run: ", s.message(), "\n"));
    return completion;
  }
  const fs::path base(base_dir);
  const fs::path scratch = base / "root";
  std::error_code ec;
  RemoveTree(base);
  fs::create_directories(scratch, ec);
  if (ec) {
    completion.set_infra_error(
        absl::StrCat("cannot create ", scratch.string(), ": ", ec.message()));
    return completion;
  }
  const bool image = !action.working_directory().empty();
  DiskClaims::Claim claim;  // held until the action is done
  if (image) {
    if (absl::Status s = LayOutImage(action, scratch.string(), mounts, bounded ? &claim : nullptr);
        !s.ok()) {
      if (absl::IsUnavailable(s)) {  // this worker's disk, now: another worker may run it
        completion.set_infra_error(std::string(s.message()));
        return completion;
      }
      // The client's trees or this worker's toolchain: the action cannot run here as asked.
      result->set_exit_code(126);
      result->set_stderr_tail(
          absl::StrCat("wheelfarm: cannot run the image action: ", s.message(), "\n"));
      return completion;
    }
  } else if (bounded) {
    if (absl::Status s = ClaimLayout(FootprintOf(action).bytes, claim); !s.ok()) {
      if (absl::IsUnavailable(s)) {
        completion.set_infra_error(std::string(s.message()));
        return completion;
      }
      result->set_exit_code(126);
      result->set_stderr_tail(absl::StrCat("wheelfarm: refused to run: ", s.message(), "\n"));
      return completion;
    }
  }
  for (const auto& in : action.inputs()) {
    const fs::path dest = scratch / in.path();
    fs::create_directories(dest.parent_path(), ec);
    absl::Status s = cache_->MaterializeAt(in.digest(), dest.string(), in.executable());
    if (!s.ok()) {
      completion.set_infra_error(absl::StrCat("input '", in.path(), "': ", s.message()));
      return completion;
    }
  }
  for (const auto& out : action.output_paths()) {
    fs::create_directories((scratch / out).parent_path(), ec);
  }
  if (sandbox_ != nullptr && action.source_stamps_size() > 0) {
    if (absl::Status s = MakeStandIns(action, base / "stamps", mounts); !s.ok()) {
      completion.set_infra_error(std::string(s.message()));
      return completion;
    }
  }

  result->mutable_phases()->set_fetch(timeline.Mark("layout"));

  CommandSpec spec;
  spec.argv.assign(action.argv().begin(), action.argv().end());
  spec.env.insert(action.env().begin(), action.env().end());
  const auto& req = action.requirements();
  if (auto root =
          cuda_roots_.find(req.cuda_release().empty() ? req.cuda_version() : req.cuda_release());
      root != cuda_roots_.end()) {
    spec.env["FARM_CUDA_ROOT"] = root->second;
    mounts.read_only.push_back(root->second);
    // A toolkit for another CPU runs through qemu-user, which finds its loader here. The
    // worker's start check counted on it (toolkit_check), so its actions get it too; it
    // changes where qemu looks, never what cicc writes.
    if (const std::string prefix = GetEnv("QEMU_LD_PREFIX"); !prefix.empty()) {
      spec.env["QEMU_LD_PREFIX"] = prefix;
      mounts.read_only.push_back(prefix);
    }
  }
  spec.cwd = scratch.string();
  if (image) spec.image_cwd = action.working_directory();
  spec.stdout_path = (base / "stdout").string();
  spec.stderr_path = (base / "stderr").string();
  spec.timeout = absl::Seconds(action.timeout_seconds() > 0 ? action.timeout_seconds() : 3600);
  spec.sandbox = sandbox_;
  if (bounded) {
    // What the action can write: its logs and its writable directories (an image action's
    // outputs' directories; the whole scratch directory otherwise).
    std::vector<std::string> written = {spec.stdout_path, spec.stderr_path};
    if (image) {
      for (const std::string& dir : mounts.image_writable) {
        written.push_back((scratch / dir).string());
      }
    } else {
      written.push_back(scratch.string());
    }
    spec.watch = DiskWatch(std::move(written));
    // A disk takes a few hundred MB in this time: the most an action can overshoot by.
    spec.watch_period = absl::Milliseconds(250);
  }
  mounts.writable.push_back(spec.cwd);
  spec.mounts = std::move(mounts);
  if (follower != nullptr) follower->Start(spec.stdout_path);
  auto outcome = RunCommandInDirectory(spec, cancel);
  if (follower != nullptr) follower->Stop();
  result->mutable_phases()->set_run(timeline.Mark("run"));
  if (!outcome.ok()) {
    // The program is missing here: the whole point of requirements is that it should not be.
    result->set_exit_code(127);
    result->set_stderr_tail(absl::StrCat("wheelfarm: ", outcome.status().message(), "\n"));
    return completion;
  }
  // What it wrote after the watch last looked counts too: a fast writer finishes between two.
  if (spec.watch && outcome->killed_for.empty() && !outcome->cancelled) {
    if (std::optional<std::string> reason = spec.watch(); reason.has_value()) {
      outcome->killed_for = *std::move(reason);
    }
  }
  if (outcome->timed_out) {
    std::ofstream(spec.stderr_path, std::ios::app)
        << "\nwheelfarm: killed after the action's timeout of " << action.timeout_seconds()
        << " s\n";
  }
  if (!outcome->killed_for.empty()) {
    // Its files may be what filled the disk: the log says why, nothing else is uploaded. The
    // file was truncated so that the note fits.
    std::error_code trunc;
    fs::resize_file(spec.stderr_path, 0, trunc);
    std::ofstream(spec.stderr_path, std::ios::app)
        << "wheelfarm: stopped: " << outcome->killed_for << "\n";
  }
  // A stopped action fails whatever its command's own status: what it made is thrown away.
  result->set_exit_code(outcome->killed_for.empty() ? outcome->exit_code : 128 + SIGKILL);
  result->set_wall_seconds(outcome->wall_seconds);
  result->set_cpu_seconds(outcome->cpu_seconds);
  result->set_peak_rss_bytes(outcome->peak_rss_bytes);
  result->set_stdout_tail(Tail(spec.stdout_path));
  result->set_stderr_tail(Tail(spec.stderr_path));
  if (outcome->cancelled) return completion;
  if (!outcome->killed_for.empty()) {
    RemoveTree(scratch);
    std::error_code trunc;
    fs::resize_file(spec.stdout_path, 0, trunc);
  }

  for (const auto& [path, digest_field] : std::map<std::string, farm::v1::Digest*>{
           {spec.stdout_path, result->mutable_stdout_digest()},
           {spec.stderr_path, result->mutable_stderr_digest()}}) {
    auto digest = cas_->UploadFile(path);
    if (!digest.ok()) {
      completion.set_infra_error(absl::StrCat("uploading logs: ", digest.status().message()));
      return completion;
    }
    *digest_field = *digest;
  }
  for (const auto& out : action.output_paths()) {
    if (!IsPlainFileInside(scratch, out)) {
      if (fs::is_symlink(scratch / out, ec)) {
        log->warn("lease {}: output '{}' is a symlink; not uploaded", lease.lease_id(), out);
      }
      continue;  // missing outputs are simply absent from the result
    }
    auto digest = cas_->UploadFile((scratch / out).string());
    if (!digest.ok()) {
      completion.set_infra_error(
          absl::StrCat("uploading '", out, "': ", digest.status().message()));
      return completion;
    }
    auto* o = result->add_outputs();
    o->set_path(out);
    *o->mutable_digest() = *digest;
  }
  result->mutable_phases()->set_output_upload(timeline.Mark("upload"));
  timeline.Note("the command", absl::Seconds(outcome->wall_seconds));
  log->debug("lease {}: {}", lease.lease_id(), timeline.Summary());
  return completion;
}

}  // namespace farm::worker
