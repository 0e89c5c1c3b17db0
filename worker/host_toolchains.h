// The C/C++ toolchains of farm-cc's host compiles on this worker: each fetched from the CAS and
// laid out once under <dir>/<tree hash>/root, checked by running its compiler (`--version`) in
// the sandbox with nothing but the toolchain as its root, then shown read-only to every action
// that names it. A toolchain that does not run here (another CPU, a missing library) fails its
// actions with the reason instead of compiling anything.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "farm/v1/actions.pb.h"
#include "libfarm/cas/cas_client.h"
#include "worker/blob_cache.h"
#include "worker/sandbox.h"

namespace farm::worker {

struct PreparedToolchain {
  std::string root;         // host directory holding the tree's files at their paths
  farm::v1::FileTree tree;  // checked
};

class HostToolchains {
 public:
  // `sandbox` must not be null: toolchains run only in it.
  HostToolchains(std::string dir, BlobCache* cache, CasClient* cas, const Sandbox* sandbox);

  // The toolchain ready to show to an action: fetched, laid out and checked on first use.
  absl::StatusOr<std::shared_ptr<const PreparedToolchain>> Prepare(
      const farm::v1::HostToolchain& toolchain);

 private:
  absl::Status Check(const PreparedToolchain& prepared, const farm::v1::HostToolchain& toolchain,
                     const std::string& work);

  const std::string dir_;
  BlobCache* const cache_;
  CasClient* const cas_;
  const Sandbox* const sandbox_;

  // Held while one is prepared: a new toolchain is rare, and a second action naming it waits
  // for the first to finish instead of laying it out twice.
  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<const PreparedToolchain>> ready_ ABSL_GUARDED_BY(mu_);
  // Toolchains whose check failed: the check is deterministic, so their actions fail at once.
  std::map<std::string, absl::Status> failed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace farm::worker
