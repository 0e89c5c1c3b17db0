#include "coordinator/farm_service.h"

#include "libfarm/time/proto_time.h"

namespace farm::coordinator {

FarmServiceImpl::FarmServiceImpl(const RpcGate* gate, const WorkerRegistry* registry,
                                 const CoordinatorIdentity* identity)
    : gate_(gate), registry_(registry), identity_(identity) {}

grpc::Status FarmServiceImpl::GetStatus(grpc::ServerContext* context,
                                        const farm::v1::GetStatusRequest*,
                                        farm::v1::GetStatusResponse* response) {
  return gate_->Serve(*context, "FarmService.GetStatus", [&] {
    *response = Status();
    return absl::OkStatus();
  });
}

grpc::Status FarmServiceImpl::ListWorkers(grpc::ServerContext* context,
                                          const farm::v1::ListWorkersRequest*,
                                          farm::v1::ListWorkersResponse* response) {
  return gate_->Serve(*context, "FarmService.ListWorkers", [&] {
    *response = Workers();
    return absl::OkStatus();
  });
}

farm::v1::GetStatusResponse FarmServiceImpl::Status() const {
  farm::v1::GetStatusResponse out;
  out.set_version(identity_->version);
  *out.mutable_started_at() = ToProtoTime(identity_->started_at);
  out.set_grpc_address(identity_->grpc_address);
  out.set_http_address(identity_->http_address);
  out.set_tls(identity_->tls);
  const WorkerCounts counts = registry_->Counts();
  out.set_workers_online(counts.online);
  out.set_workers_draining(counts.draining);
  out.set_workers_lost(counts.lost);
  out.set_workers_offline(counts.offline);
  out.set_slots_online(counts.slots_online);
  out.set_worker_timeout_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(registry_->timeout())));
  return out;
}

farm::v1::ListWorkersResponse FarmServiceImpl::Workers() const {
  farm::v1::ListWorkersResponse out;
  for (auto& w : registry_->List()) *out.add_workers() = std::move(w);
  return out;
}

}  // namespace farm::coordinator
