// The C/C++ toolchains of farm-cc's host compiles on this worker: each tree fetched from the CAS
// and laid out once under <dir>/<tree hash>/root, and each compiler in it checked (`--version`)
// in the sandbox with nothing but the toolchain as its root, then shown read-only to every
// action that names it. A toolchain that does not run here (another CPU, a missing library)
// fails its actions with the reason instead of compiling anything.
//
// Shared by every tenant of the worker, so an answer is kept only for the question that made
// it: a layout by the tree's digest (its content), a check by tree digest, compiler and CPU
// arch. A deterministic failure (a tree that does not parse, a compiler that is not in the
// tree or exits non-zero) is kept for that same request; a passing fault (a download, a check
// that ran out of time) is never kept. No lock is held across a download, a layout or a check:
// preparing one toolchain never holds up an action whose toolchain is ready or another one.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "farm/v1/actions.pb.h"
#include "worker/blob_cache.h"
#include "worker/sandbox.h"

namespace farm::worker {

struct PreparedToolchain {
  std::string root;         // host directory holding the tree's files at their paths
  farm::v1::FileTree tree;  // checked
};

struct HostToolchainsOptions {
  // A compiler's `--version` runs at most this long (under qemu a few seconds).
  absl::Duration check_timeout = absl::Seconds(60);
  // A toolchain tree holding more (every file counted at each path) is refused before any of
  // it is laid out: the worker's per-action disk limit.
  uint64_t max_tree_bytes = uint64_t{4} << 30;
  // A kept failure answers for this long, then the next request tries again: a check that
  // failed for a reason of the moment (the sandbox could not start) heals by itself.
  absl::Duration keep_failure = absl::Minutes(5);
};

class HostToolchains {
 public:
  // `sandbox` must not be null: toolchains run only in it.
  HostToolchains(std::string dir, BlobCache* cache, const Sandbox* sandbox,
                 HostToolchainsOptions options = {});

  // The toolchain ready to show to an action: fetched, laid out and its compiler checked on
  // first use. Callers asking for the same thing meanwhile wait for that first answer.
  absl::StatusOr<std::shared_ptr<const PreparedToolchain>> Prepare(
      const farm::v1::HostToolchain& toolchain);

  // Compiler checks run so far (not answered from what was kept): for tests.
  int checks_run() const { return checks_run_.load(); }

 private:
  // One piece of work done once for everyone who asks the same: the first caller does it with
  // no lock held, the others wait for its outcome.
  struct Once {
    absl::Notification done;
    absl::StatusOr<std::shared_ptr<const PreparedToolchain>> outcome;
    absl::Time settled;  // when `done` was notified
  };

  // Finds or makes the Once for `key` (a new one where the kept failure is older than
  // keep_failure); `first` says whether the caller must do it.
  std::shared_ptr<Once> Claim(const std::string& key, bool& first) ABSL_LOCKS_EXCLUDED(mu_);
  // Records `outcome`, forgets it when it is not to be kept (a passing fault), wakes waiters.
  void Settle(const std::string& key, Once& once,
              absl::StatusOr<std::shared_ptr<const PreparedToolchain>> outcome, bool keep)
      ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<std::shared_ptr<const PreparedToolchain>> LayOut(const farm::v1::Digest& tree);
  absl::Status Check(const PreparedToolchain& prepared, const farm::v1::HostToolchain& toolchain,
                     const std::string& work);

  const std::string dir_;
  BlobCache* const cache_;
  const Sandbox* const sandbox_;
  const HostToolchainsOptions options_;

  // Guards the table only; never held across a download, a layout or a check.
  absl::Mutex mu_;
  // Layouts by "layout " and the tree hash; checks by "check " and the tree hash, compiler and
  // CPU arch (CheckKey).
  std::map<std::string, std::shared_ptr<Once>> work_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> checks_run_{0};
  std::atomic<uint64_t> next_check_dir_{0};
};

}  // namespace farm::worker
