// The real ActionExecutor: a fresh scratch directory per lease, inputs copied from the blob
// cache, the command run inside it (in the sandbox, which shows it only the scratch directory,
// its toolkit and the system; for a filesystem image action, only its trees laid out in the
// scratch directory and its toolchain), outputs and logs uploaded to the CAS. Nothing outside the
// scratch directory is read or written on the action's behalf.
#pragma once

#include <map>
#include <string>

#include "libfarm/cas/cas_client.h"
#include "worker/action_executor.h"
#include "worker/blob_cache.h"
#include "worker/host_toolchains.h"
#include "worker/sandbox.h"

namespace farm::worker {

// Follows a running command's stdout file as it grows (wheel builds stream it to the build
// log). Start is called once the command runs; Stop after it exited, before the file goes.
class OutputFollower {
 public:
  virtual ~OutputFollower() = default;
  virtual void Start(const std::string& stdout_path) = 0;
  virtual void Stop() = 0;
};

class ActionRunner final : public ActionExecutor {
 public:
  // `cuda_roots`: toolkit root by version ("13.0") and by release ("13.0.88"). An action
  // that requires an exact release (else version) sees that root as $FARM_CUDA_ROOT, so it
  // can name tools without knowing where this host keeps them.
  // `sandbox`: where commands run; null runs them with the worker's own rights (--no-sandbox).
  ActionRunner(std::string scratch_root, BlobCache* cache, CasClient* cas,
               std::map<std::string, std::string> cuda_roots = {}, const Sandbox* sandbox = nullptr,
               HostToolchains* toolchains = nullptr);

  // Empties the scratch root: what a worker killed mid-action left there. Called at start,
  // before any lease runs.
  absl::Status ClearScratchRoot();

  // Runs the lease's action in <scratch root>/<lease id>, removed afterwards.
  farm::v1::Completion Execute(const farm::v1::Lease& lease,
                               const std::atomic<bool>& cancel) override;

  // Runs `action` for `lease` with `base`/root as its working directory (emptied first) and
  // its stdout and stderr files beside it. The caller owns `base` and removes it. In the
  // sandbox the command sees `base`/root (writable), its toolkit, the system and `mounts`.
  farm::v1::Completion RunIn(const farm::v1::Lease& lease, const farm::v1::Action& action,
                             const std::string& base, const std::atomic<bool>& cancel,
                             OutputFollower* follower = nullptr, SandboxMounts mounts = {});

  bool sandboxed() const { return sandbox_ != nullptr; }

 private:
  // A filesystem image action's root in `scratch`: its toolchain's mount points and its input
  // tree's files; sets `mounts` to show it.
  absl::Status LayOutImage(const farm::v1::Action& action, const std::string& scratch,
                           SandboxMounts& mounts);

  std::string scratch_root_;
  BlobCache* cache_;
  CasClient* cas_;
  std::map<std::string, std::string> cuda_roots_;
  const Sandbox* const sandbox_;
  HostToolchains* const toolchains_;  // filesystem image actions; null: refused
};

}  // namespace farm::worker
