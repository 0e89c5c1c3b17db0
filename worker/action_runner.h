// The real ActionExecutor: a fresh scratch directory per lease, inputs from the blob cache,
// the command run inside it, outputs and logs uploaded to the CAS. Nothing outside the
// scratch directory is read or written on the action's behalf.
#pragma once

#include <map>
#include <string>

#include "libfarm/cas/cas_client.h"
#include "worker/action_executor.h"
#include "worker/blob_cache.h"

namespace farm::worker {

class ActionRunner final : public ActionExecutor {
 public:
  // `cuda_roots`: toolkit root by version ("13.0"). An action that requires an exact
  // version sees that root as $FARM_CUDA_ROOT, so it can name tools without knowing where
  // this host keeps them.
  ActionRunner(std::string scratch_root, BlobCache* cache, CasClient* cas,
               std::map<std::string, std::string> cuda_roots = {});

  farm::v1::Completion Execute(const farm::v1::Lease& lease,
                               const std::atomic<bool>& cancel) override;

 private:
  std::string scratch_root_;
  BlobCache* cache_;
  CasClient* cas_;
  std::map<std::string, std::string> cuda_roots_;
};

}  // namespace farm::worker
