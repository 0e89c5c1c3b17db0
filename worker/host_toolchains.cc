#include "worker/host_toolchains.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/file_tree.h"
#include "libfarm/file_tree/footprint.h"
#include "libfarm/logging/logger.h"
#include "libfarm/text/utf8.h"
#include "worker/command_runner.h"
#include "worker/file_tree_image.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

// What a failed check quotes of the compiler's stderr: a line, not a page.
constexpr size_t kQuotedBytes = 200;

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  if (line.size() > kQuotedBytes) line.resize(kQuotedBytes);
  return ValidUtf8OrEscaped(absl::StripAsciiWhitespace(line));
}

// Everything a check's answer depends on: the files (the tree's digest), which of them runs,
// and the CPU it is built for. The hash has a fixed length and the arch no NUL.
std::string CheckKey(const farm::v1::HostToolchain& toolchain) {
  return absl::StrCat(toolchain.tree().hash(), toolchain.cpu_arch(), std::string(1, '\0'),
                      toolchain.compiler());
}

// INVALID_ARGUMENT unless the compiler is a file of the tree (through its links, as the
// sandbox resolves it): the check and the actions run nothing the tree does not hold.
absl::Status CheckCompilerInTree(const farm::v1::FileTree& tree, const std::string& compiler) {
  if (ResolveFileInTree(tree, compiler).ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the toolchain's compiler ", compiler.substr(0, 200),
      " is not a file of its tree. Fix: name the driver the tree holds (farm-cc does)"));
}

}  // namespace

HostToolchains::HostToolchains(std::string dir, BlobCache* cache, const Sandbox* sandbox,
                               HostToolchainsOptions options)
    : dir_(std::move(dir)), cache_(cache), sandbox_(sandbox), options_(options) {}

std::shared_ptr<HostToolchains::Once> HostToolchains::Claim(const std::string& key, bool& first) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = work_.try_emplace(key);
  if (!inserted && it->second->done.HasBeenNotified() && !it->second->outcome.ok() &&
      absl::Now() - it->second->settled > options_.keep_failure) {
    inserted = true;
  }
  if (inserted) it->second = std::make_shared<Once>();
  first = inserted;
  return it->second;
}

void HostToolchains::Settle(const std::string& key, Once& once,
                            absl::StatusOr<std::shared_ptr<const PreparedToolchain>> outcome,
                            bool keep) {
  once.outcome = std::move(outcome);
  once.settled = absl::Now();
  if (!keep) {
    absl::MutexLock lock(&mu_);
    if (auto it = work_.find(key); it != work_.end() && it->second.get() == &once) work_.erase(it);
  }
  once.done.Notify();
}

absl::Status HostToolchains::Check(const PreparedToolchain& prepared,
                                   const farm::v1::HostToolchain& toolchain,
                                   const std::string& work) {
  ++checks_run_;
  const fs::path image = fs::path(work) / "image";
  std::error_code ec;
  fs::remove_all(work, ec);
  fs::create_directories(image, ec);
  struct RemoveWork {
    std::string dir;
    ~RemoveWork() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{work};
  auto mounts = MountPointsFor(prepared.tree, prepared.root, image.string());
  if (!mounts.ok()) return mounts.status();
  CommandSpec spec;
  spec.argv = {toolchain.compiler(), "--version"};
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"LC_ALL", "C"}};
  spec.cwd = work;
  spec.image_cwd = std::string(1, '/');
  spec.stdout_path = (fs::path(work) / "stdout").string();
  spec.stderr_path = (fs::path(work) / "stderr").string();
  spec.timeout = options_.check_timeout;
  spec.sandbox = sandbox_;
  spec.mounts.image_root = image.string();
  spec.mounts.image_files = *std::move(mounts);
  const std::atomic<bool> never{false};
  auto outcome = RunCommandInDirectory(spec, never);
  if (!outcome.ok()) return outcome.status();
  if (outcome->timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(
        "the toolchain's compiler ", toolchain.compiler(), " did not answer --version within ",
        absl::FormatDuration(options_.check_timeout),
        " on this worker. Fix: retry; a compiler that hangs cannot be run here"));
  }
  if (outcome->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the toolchain's compiler ", toolchain.compiler(), " does not run on this worker (",
        toolchain.cpu_arch(), " toolchain, exit ", outcome->exit_code, ": ",
        FirstLine(spec.stderr_path),
        "). Fix: the toolchain's tree lacks a file it needs; compile locally (FARM_CC_DISABLE=1) "
        "and report it"));
  }
  ComponentLogger("worker")->info("toolchain {} ({}) runs here: {}",
                                  toolchain.tree().hash().substr(0, 12), toolchain.compiler(),
                                  FirstLine(spec.stdout_path));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const PreparedToolchain>> HostToolchains::LayOut(
    const farm::v1::Digest& tree_digest) {
  const std::string& hash = tree_digest.hash();
  bool first = false;
  const std::string key = absl::StrCat("layout ", hash);
  std::shared_ptr<Once> once = Claim(key, first);
  if (!first) {
    once->done.WaitForNotification();
    return once->outcome;
  }
  auto lay_out = [&]() -> absl::StatusOr<std::shared_ptr<const PreparedToolchain>> {
    // Laid out fresh on each start of the worker: the tree is small beside what it names, and
    // the blob cache keeps the files, so a restart costs copies, not downloads.
    const fs::path base = fs::path(dir_) / hash;
    std::error_code ec;
    fs::remove_all(base / "root", ec);
    auto tree = ReadFileTree(tree_digest, cache_);
    if (!tree.ok()) return tree.status();
    if (absl::Status s = CheckFootprint("the toolchain's tree", FootprintOf(*tree),
                                        options_.max_tree_bytes, "farm-worker --max-action-disk");
        !s.ok()) {
      return s;
    }
    auto prepared = std::make_shared<PreparedToolchain>();
    prepared->root = (base / "root").string();
    prepared->tree = *std::move(tree);
    fs::create_directories(prepared->root, ec);
    // Shown read-only to every action (MountPointsFor): all of it links.
    if (absl::Status s = LayOutFileTree(prepared->tree, prepared->root, cache_, {}); !s.ok()) {
      return s;
    }
    return std::shared_ptr<const PreparedToolchain>(std::move(prepared));
  };
  auto outcome = lay_out();
  // A tree's content is its digest: one that does not parse or is too large never will be.
  // A download or a write that failed may pass next time.
  const bool keep = outcome.ok() || absl::IsInvalidArgument(outcome.status()) ||
                    absl::IsResourceExhausted(outcome.status());
  Settle(key, *once, outcome, keep);
  return outcome;
}

absl::StatusOr<std::shared_ptr<const PreparedToolchain>> HostToolchains::Prepare(
    const farm::v1::HostToolchain& toolchain) {
  if (absl::Status s = ValidateDigest(toolchain.tree()); !s.ok()) return s;
  const std::string key = absl::StrCat("check ", CheckKey(toolchain));
  bool first = false;
  std::shared_ptr<Once> once = Claim(key, first);
  if (!first) {
    once->done.WaitForNotification();
    return once->outcome;
  }
  absl::StatusOr<std::shared_ptr<const PreparedToolchain>> outcome = LayOut(toolchain.tree());
  // Kept: a pass, and a check that ran and failed (it fails the same way for this same
  // request). Not kept: anything that may pass next time (a layout fault, a timeout); a
  // layout's lasting failure is kept by LayOut itself.
  bool keep = outcome.ok();
  if (outcome.ok()) {
    absl::Status s = CheckCompilerInTree((*outcome)->tree, toolchain.compiler());
    if (s.ok()) {
      const std::string work =
          (fs::path(dir_) / toolchain.tree().hash() / absl::StrCat("check-", next_check_dir_++))
              .string();
      s = Check(**outcome, toolchain, work);
    }
    keep = s.ok() || absl::IsFailedPrecondition(s) || absl::IsInvalidArgument(s);
    if (!s.ok()) outcome = s;
  }
  Settle(key, *once, outcome, keep);
  return outcome;
}

}  // namespace farm::worker
