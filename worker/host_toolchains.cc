#include "worker/host_toolchains.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libfarm/digest/digest.h"
#include "libfarm/logging/logger.h"
#include "worker/command_runner.h"
#include "worker/file_tree_image.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

HostToolchains::HostToolchains(std::string dir, BlobCache* cache, CasClient* cas,
                               const Sandbox* sandbox)
    : dir_(std::move(dir)), cache_(cache), cas_(cas), sandbox_(sandbox) {}

absl::Status HostToolchains::Check(const PreparedToolchain& prepared,
                                   const farm::v1::HostToolchain& toolchain,
                                   const std::string& work) {
  const fs::path image = fs::path(work) / "image";
  std::error_code ec;
  fs::remove_all(work, ec);
  fs::create_directories(image, ec);
  auto mounts = MountPointsFor(prepared.tree, prepared.root, image.string());
  if (!mounts.ok()) return mounts.status();
  CommandSpec spec;
  spec.argv = {toolchain.compiler(), "--version"};
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"LC_ALL", "C"}};
  spec.cwd = work;
  spec.image_cwd = std::string(1, '/');
  spec.stdout_path = (fs::path(work) / "stdout").string();
  spec.stderr_path = (fs::path(work) / "stderr").string();
  spec.timeout = absl::Seconds(60);
  spec.sandbox = sandbox_;
  spec.mounts.image_root = image.string();
  spec.mounts.image_files = *std::move(mounts);
  const std::atomic<bool> never{false};
  auto outcome = RunCommandInDirectory(spec, never);
  if (!outcome.ok()) return outcome.status();
  if (outcome->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the toolchain's compiler ", toolchain.compiler(), " does not run on this worker (",
        toolchain.cpu_arch(), " toolchain, exit ", outcome->exit_code, ": ",
        absl::StripAsciiWhitespace(FirstLine(spec.stderr_path)),
        "). Fix: the toolchain's tree lacks a file it needs; compile locally (FARM_CC_DISABLE=1) "
        "and report it"));
  }
  ComponentLogger("worker")->info("toolchain {} ({}) runs here: {}",
                                  toolchain.tree().hash().substr(0, 12), toolchain.compiler(),
                                  FirstLine(spec.stdout_path));
  fs::remove_all(work, ec);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const PreparedToolchain>> HostToolchains::Prepare(
    const farm::v1::HostToolchain& toolchain) {
  if (absl::Status s = ValidateDigest(toolchain.tree()); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const std::string& hash = toolchain.tree().hash();
  if (auto it = ready_.find(hash); it != ready_.end()) return it->second;
  if (auto it = failed_.find(hash); it != failed_.end()) return it->second;

  // Laid out fresh on each start of the worker: the tree is small beside what it names, and
  // the blob cache keeps the files, so a restart costs copies, not downloads.
  const fs::path base = fs::path(dir_) / hash;
  std::error_code ec;
  fs::remove_all(base, ec);
  auto bytes = cas_->DownloadBytes(toolchain.tree(), kMaxFileTreeBytes);
  if (!bytes.ok()) return bytes.status();
  auto tree = ParseFileTree(*bytes);
  if (!tree.ok()) return tree.status();
  auto prepared = std::make_shared<PreparedToolchain>();
  prepared->root = (base / "root").string();
  prepared->tree = *std::move(tree);
  fs::create_directories(prepared->root, ec);
  // Shown read-only to every action (MountPointsFor): all of it links.
  if (absl::Status s = LayOutFileTree(prepared->tree, prepared->root, cache_, {}); !s.ok()) {
    return s;
  }
  if (absl::Status s = Check(*prepared, toolchain, (base / "check").string()); !s.ok()) {
    failed_[hash] = s;
    return s;
  }
  ready_[hash] = prepared;
  return std::shared_ptr<const PreparedToolchain>(prepared);
}

}  // namespace farm::worker
