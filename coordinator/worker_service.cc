#include "coordinator/worker_service.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "coordinator/rpc_outcome.h"
#include "libfarm/logging/logger.h"

namespace farm::coordinator {

absl::Status ValidateWorkerName(const std::string& name) {
  const bool valid =
      !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
      });
  if (!valid) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid worker name '", name,
                     "': use 1-64 characters from A-Z a-z 0-9 . _ - (farm-worker --name)"));
  }
  return absl::OkStatus();
}

WorkerServiceImpl::WorkerServiceImpl(const TokenVerifier* auth, WorkerRegistry* registry,
                                     MetricsRegistry* metrics)
    : auth_(auth), registry_(registry), metrics_(metrics) {}

grpc::Status WorkerServiceImpl::Finish(const char* method, const absl::Status& status) {
  return FinishRpc(*metrics_, method, status);
}

uint32_t WorkerServiceImpl::HeartbeatIntervalMs() const {
  // Three heartbeats per timeout, so one lost packet does not mark a worker lost.
  return static_cast<uint32_t>(
      std::max<int64_t>(100, absl::ToInt64Milliseconds(registry_->timeout()) / 3));
}

grpc::Status WorkerServiceImpl::Register(grpc::ServerContext* context,
                                         const farm::v1::RegisterRequest* request,
                                         farm::v1::RegisterResponse* response) {
  if (absl::Status s = auth_->Check(*context); !s.ok()) return Finish("Register", s);
  if (absl::Status s = ValidateWorkerName(request->name()); !s.ok()) return Finish("Register", s);
  if (request->capabilities().slots() == 0) {
    return Finish("Register", absl::InvalidArgumentError("a worker must offer at least 1 slot"));
  }
  auto session = registry_->Register(request->name(), request->capabilities(), context->peer());
  if (!session.ok()) return Finish("Register", session.status());
  ComponentLogger("coordinator")
      ->info("worker '{}' registered from {} ({} {}, glibc {}, {} slots, {} CUDA toolkit(s))",
             request->name(), context->peer(), request->capabilities().os(),
             request->capabilities().cpu_arch(), request->capabilities().glibc(),
             request->capabilities().slots(), request->capabilities().cuda_size());
  response->set_session_id(*session);
  response->set_heartbeat_interval_ms(HeartbeatIntervalMs());
  return Finish("Register", absl::OkStatus());
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext* context,
                                          const farm::v1::HeartbeatRequest* request,
                                          farm::v1::HeartbeatResponse* response) {
  if (absl::Status s = auth_->Check(*context); !s.ok()) return Finish("Heartbeat", s);
  absl::Status s = registry_->Heartbeat(request->name(), request->session_id(), request->draining(),
                                        request->slots_in_use());
  response->set_heartbeat_interval_ms(HeartbeatIntervalMs());
  return Finish("Heartbeat", s);
}

grpc::Status WorkerServiceImpl::Leave(grpc::ServerContext* context,
                                      const farm::v1::LeaveRequest* request,
                                      farm::v1::LeaveResponse*) {
  if (absl::Status s = auth_->Check(*context); !s.ok()) return Finish("Leave", s);
  return Finish("Leave", registry_->Leave(request->name(), request->session_id()));
}

}  // namespace farm::coordinator
