#include "coordinator/reapi/capabilities_service.h"

#include "coordinator/reapi/request_checks.h"
#include "libfarm/cas/cas_limits.h"

namespace farm::coordinator::reapi {

int64_t MaxBatchTotalSizeBytes() {
  return static_cast<int64_t>(kCasMaxMessageBytes) - static_cast<int64_t>(kCasChunkBytes);
}

grpc::Status CapabilitiesService::GetCapabilities(grpc::ServerContext* context,
                                                  const rev2::GetCapabilitiesRequest* request,
                                                  rev2::ServerCapabilities* response) {
  return gate_->Serve(
      *context, "Capabilities.GetCapabilities", [&](const Caller& caller) -> absl::Status {
        if (absl::Status s = CheckInstanceName(request->instance_name()); !s.ok()) return s;
        rev2::CacheCapabilities* cache = response->mutable_cache_capabilities();
        cache->add_digest_functions(rev2::DigestFunction::SHA256);
        // The truth for this caller's token, by the gate's own rule: Bazel uploads results only
        // when told it may, and a refused upload would fail its build.
        cache->mutable_action_cache_update_capabilities()->set_update_enabled(
            gate_->Allows(caller, "ActionCache.UpdateActionResult"));
        cache->set_max_batch_total_size_bytes(MaxBatchTotalSizeBytes());
        // Blobs are stored content-addressed only: no symlink policy applies to them yet.
        cache->set_symlink_absolute_path_strategy(rev2::SymlinkAbsolutePathStrategy::DISALLOWED);
        response->mutable_low_api_version()->set_major(2);
        response->mutable_high_api_version()->set_major(2);
        return absl::OkStatus();
      });
}

}  // namespace farm::coordinator::reapi
