// The real ActionExecutor: a fresh scratch directory per lease, inputs copied from the blob
// cache, the command run inside it (in the sandbox, which shows it only the scratch directory,
// its toolkit and the system; for a filesystem image action, only its trees laid out in the
// scratch directory and its toolchain), outputs and logs uploaded to the CAS. Nothing outside the
// scratch directory is read or written on the action's behalf.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libfarm/cas/cas_client.h"
#include "worker/action_executor.h"
#include "worker/blob_cache.h"
#include "worker/disk_claims.h"
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

// What one leased action (Execute) may cost this worker's disk. Wheel builds and smoke tests,
// which the coordinator itself queues, run under their own rules (RunIn).
struct ActionDiskLimits {
  // Its laid-out inputs (every copy and new linked file) and what it writes while running
  // (outputs, logs, anything in its writable directories). Refused before layout when its
  // inputs alone are over; stopped while running when it goes over.
  uint64_t max_action_bytes = uint64_t{4} << 30;
  // Free space every layout leaves for the blob cache and other actions. While the disk is
  // below half of it, an action that has written more than kGrowthAllowance since it started
  // is stopped.
  uint64_t reserve_bytes = uint64_t{2} << 30;
  DiskClaims::FreeBytesFn free_bytes;  // empty: libfarm/disk's FreeBytes
};

class ActionRunner final : public ActionExecutor {
 public:
  // `cuda_roots`: toolkit root by version ("13.0") and by release ("13.0.88"). An action
  // that requires an exact release (else version) sees that root as $FARM_CUDA_ROOT, so it
  // can name tools without knowing where this host keeps them.
  // `sandbox`: where commands run; null runs them with the worker's own rights (--no-sandbox).
  ActionRunner(std::string scratch_root, BlobCache* cache, CasClient* cas,
               std::map<std::string, std::string> cuda_roots = {}, const Sandbox* sandbox = nullptr,
               HostToolchains* toolchains = nullptr, ActionDiskLimits limits = {});

  // Empties the scratch root: what a worker killed mid-action left there. Called at start,
  // before any lease runs.
  absl::Status ClearScratchRoot();

  // Runs the lease's action in <scratch root>/<lease id>, removed afterwards, within the disk
  // limits.
  farm::v1::Completion Execute(const farm::v1::Lease& lease,
                               const std::atomic<bool>& cancel) override;

  // Runs `action` for `lease` with `base`/root as its working directory (emptied first) and
  // its stdout and stderr files beside it. The caller owns `base` and removes it. In the
  // sandbox the command sees `base`/root (writable), its toolkit, the system and `mounts`.
  farm::v1::Completion RunIn(const farm::v1::Lease& lease, const farm::v1::Action& action,
                             const std::string& base, const std::atomic<bool>& cancel,
                             OutputFollower* follower = nullptr, SandboxMounts mounts = {});

  bool sandboxed() const { return sandbox_ != nullptr; }
  const ActionDiskLimits& disk_limits() const { return limits_; }

 private:
  // RunIn, with the disk limits when `bounded`.
  farm::v1::Completion Run(const farm::v1::Lease& lease, const farm::v1::Action& action,
                           const std::string& base, const std::atomic<bool>& cancel,
                           OutputFollower* follower, SandboxMounts mounts, bool bounded);
  // A filesystem image action's root in `scratch`: its toolchain's mount points and its input
  // tree's files; sets `mounts` to show it. With `claim`, the bytes the layout writes are
  // checked against the limits and claimed first (RESOURCE_EXHAUSTED: over this action's
  // limit; UNAVAILABLE: no room on this worker now).
  absl::Status LayOutImage(const farm::v1::Action& action, const std::string& scratch,
                           SandboxMounts& mounts, DiskClaims::Claim* claim);
  // Checks `bytes` against the action limit and claims them (codes as LayOutImage's).
  absl::Status ClaimLayout(uint64_t bytes, DiskClaims::Claim& claim);
  // The watch that stops a running action over its limit, or growing while the disk is below
  // half its reserve.
  std::function<std::optional<std::string>()> DiskWatch(std::vector<std::string> paths);

  std::string scratch_root_;
  BlobCache* cache_;
  CasClient* cas_;
  std::map<std::string, std::string> cuda_roots_;
  const Sandbox* const sandbox_;
  HostToolchains* const toolchains_;  // filesystem image actions; null: refused
  const ActionDiskLimits limits_;
  DiskClaims claims_;
};

}  // namespace farm::worker
