#include "worker/action_runner.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "libfarm/files/relative_path.h"
#include "libfarm/logging/logger.h"
#include "worker/command_runner.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

constexpr size_t kTailBytes = 4096;

std::string Tail(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > static_cast<std::streamoff>(kTailBytes)
                                   ? size - static_cast<std::streamoff>(kTailBytes)
                                   : 0;
  in.seekg(start);
  std::string out(static_cast<size_t>(size - start), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
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

absl::Status CheckPaths(const farm::v1::Action& action) {
  for (const auto& in : action.inputs()) {
    if (absl::Status s = ValidateRelativePath(in.path()); !s.ok()) return s;
  }
  for (const auto& out : action.output_paths()) {
    if (absl::Status s = ValidateRelativePath(out); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

ActionRunner::ActionRunner(std::string scratch_root, BlobCache* cache, CasClient* cas,
                           std::map<std::string, std::string> cuda_roots)
    : scratch_root_(std::move(scratch_root)),
      cache_(cache),
      cas_(cas),
      cuda_roots_(std::move(cuda_roots)) {}

farm::v1::Completion ActionRunner::Execute(const farm::v1::Lease& lease,
                                           const std::atomic<bool>& cancel) {
  const fs::path base = fs::path(scratch_root_) / lease.lease_id();
  struct RemoveScratch {
    fs::path dir;
    ~RemoveScratch() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{base};
  return RunIn(lease, lease.action(), base.string(), cancel);
}

farm::v1::Completion ActionRunner::RunIn(const farm::v1::Lease& lease,
                                         const farm::v1::Action& action,
                                         const std::string& base_dir,
                                         const std::atomic<bool>& cancel,
                                         OutputFollower* follower) {
  auto log = ComponentLogger("worker");
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
  fs::remove_all(base, ec);
  fs::create_directories(scratch, ec);
  if (ec) {
    completion.set_infra_error(
        absl::StrCat("cannot create ", scratch.string(), ": ", ec.message()));
    return completion;
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

  CommandSpec spec;
  spec.argv.assign(action.argv().begin(), action.argv().end());
  spec.env.insert(action.env().begin(), action.env().end());
  const auto& req = action.requirements();
  if (auto root =
          cuda_roots_.find(req.cuda_release().empty() ? req.cuda_version() : req.cuda_release());
      root != cuda_roots_.end()) {
    spec.env["FARM_CUDA_ROOT"] = root->second;
    // A toolkit for another CPU runs through qemu-user, which finds its loader here. The
    // worker's start check counted on it (toolkit_check), so its actions get it too; it
    // changes where qemu looks, never what cicc writes.
    if (const char* prefix = std::getenv("QEMU_LD_PREFIX"); prefix != nullptr && *prefix != '\0') {
      spec.env["QEMU_LD_PREFIX"] = prefix;
    }
  }
  spec.cwd = scratch.string();
  spec.stdout_path = (base / "stdout").string();
  spec.stderr_path = (base / "stderr").string();
  spec.timeout = absl::Seconds(action.timeout_seconds() > 0 ? action.timeout_seconds() : 3600);
  if (follower != nullptr) follower->Start(spec.stdout_path);
  auto outcome = RunCommandInDirectory(spec, cancel);
  if (follower != nullptr) follower->Stop();
  if (!outcome.ok()) {
    // The program is missing here: the whole point of requirements is that it should not be.
    result->set_exit_code(127);
    result->set_stderr_tail(absl::StrCat("wheelfarm: ", outcome.status().message(), "\n"));
    return completion;
  }
  if (outcome->timed_out) {
    std::ofstream(spec.stderr_path, std::ios::app)
        << "\nwheelfarm: killed after the action's timeout of " << action.timeout_seconds()
        << " s\n";
  }
  result->set_exit_code(outcome->exit_code);
  result->set_wall_seconds(outcome->wall_seconds);
  result->set_cpu_seconds(outcome->cpu_seconds);
  result->set_peak_rss_bytes(outcome->peak_rss_bytes);
  result->set_stdout_tail(Tail(spec.stdout_path));
  result->set_stderr_tail(Tail(spec.stderr_path));
  if (outcome->cancelled) return completion;

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
  return completion;
}

}  // namespace farm::worker
