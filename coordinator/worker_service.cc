#include "coordinator/worker_service.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "coordinator/rpc_outcome.h"
#include "libfarm/host/shared_libraries.h"
#include "libfarm/logging/logger.h"
#include "libfarm/rpc/request_limits.h"

namespace farm::coordinator {
namespace {

// ", certificate CN=<name>" when the worker came over mutual TLS; "" otherwise.
std::string PeerCertificateNote(const grpc::ServerContext& context) {
  auto auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return "";
  for (const auto& cn : auth->FindPropertyValues("x509_common_name")) {
    return absl::StrCat(", certificate CN=", std::string(cn.data(), cn.size()));
  }
  return ", certificate without CN";
}

}  // namespace

absl::Status ValidateWorkerName(const std::string& name) {
  const bool valid =
      !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
      });
  if (!valid) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid worker name '", name.substr(0, 64), name.size() > 64 ? "…" : "",
                     "': use 1-64 characters from A-Z a-z 0-9 . _ - (farm-worker --name)"));
  }
  return absl::OkStatus();
}

WorkerServiceImpl::WorkerServiceImpl(const TokenVerifier* auth, WorkerRegistry* registry,
                                     Scheduler* scheduler, MetricsRegistry* metrics,
                                     TokenStore* build_tokens)
    : auth_(auth),
      registry_(registry),
      scheduler_(scheduler),
      metrics_(metrics),
      build_tokens_(build_tokens) {}

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
  absl::StatusOr<Caller> caller = auth_->Authorize(*context, "WorkerService.Register");
  if (!caller.ok()) return Finish("Register", caller.status());
  if (absl::Status s = ValidateWorkerName(request->name()); !s.ok()) return Finish("Register", s);
  if (request->capabilities().slots() == 0) {
    return Finish("Register", absl::InvalidArgumentError("a worker must offer at least 1 slot"));
  }
  if (absl::Status s = CheckWorkerLabels(request->capabilities()); !s.ok()) {
    return Finish("Register", s);
  }
  // The list is the worker's word and lands in every fleet listing: bounded, names only.
  if (absl::Status s = ValidateAdvertisedLibraries(
          {request->capabilities().libraries().begin(), request->capabilities().libraries().end()});
      !s.ok()) {
    return Finish("Register", s);
  }
  if (request->instance_id().size() > 64) {
    return Finish("Register", absl::InvalidArgumentError(absl::StrCat(
                                  "instance_id is ", request->instance_id().size(),
                                  " bytes; at most 64. Fix: use this version's farm-worker")));
  }
  auto session = registry_->Register(request->name(), request->capabilities(), context->peer(),
                                     request->instance_id(), caller->token_id);
  if (!session.ok()) return Finish("Register", session.status());
  ComponentLogger("coordinator")
      ->info("worker '{}' registered from {}{} ({} {}, glibc {}, {} slots, {} CUDA toolkit(s), {})",
             request->name(), context->peer(), PeerCertificateNote(*context),
             request->capabilities().os(), request->capabilities().cpu_arch(),
             request->capabilities().glibc(), request->capabilities().slots(),
             request->capabilities().cuda_size(),
             request->capabilities().sandboxed() ? "sandboxed" : "NOT sandboxed");
  response->set_session_id(*session);
  response->set_heartbeat_interval_ms(HeartbeatIntervalMs());
  return Finish("Register", absl::OkStatus());
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext* context,
                                          const farm::v1::HeartbeatRequest* request,
                                          farm::v1::HeartbeatResponse* response) {
  if (absl::Status s = auth_->Check(*context, "WorkerService.Heartbeat"); !s.ok())
    return Finish("Heartbeat", s);
  absl::Status s = registry_->Heartbeat(request->name(), request->session_id(), request->draining(),
                                        request->slots_in_use());
  response->set_heartbeat_interval_ms(HeartbeatIntervalMs());
  if (s.ok() && scheduler_ != nullptr) {
    std::vector<std::string> held(request->lease_ids().begin(), request->lease_ids().end());
    for (auto& revoked : scheduler_->Renew(request->name(), request->session_id(), held)) {
      response->add_revoked_lease_ids(std::move(revoked));
    }
  }
  return Finish("Heartbeat", s);
}

grpc::Status WorkerServiceImpl::Leave(grpc::ServerContext* context,
                                      const farm::v1::LeaveRequest* request,
                                      farm::v1::LeaveResponse*) {
  if (absl::Status s = auth_->Check(*context, "WorkerService.Leave"); !s.ok())
    return Finish("Leave", s);
  return Finish("Leave", registry_->Leave(request->name(), request->session_id()));
}

grpc::Status WorkerServiceImpl::LeaseActions(grpc::ServerContext* context,
                                             const farm::v1::LeaseActionsRequest* request,
                                             farm::v1::LeaseActionsResponse* response) {
  if (absl::Status s = auth_->Check(*context, "WorkerService.LeaseActions"); !s.ok())
    return Finish("LeaseActions", s);
  if (scheduler_ == nullptr) {
    return Finish("LeaseActions", absl::UnimplementedError("this coordinator runs no actions"));
  }
  auto caps = registry_->SessionCapabilities(request->name(), request->session_id());
  if (!caps.ok()) return Finish("LeaseActions", caps.status());
  // Long-poll, but never past the client's deadline.
  absl::Duration wait = std::min(absl::Milliseconds(request->wait_ms()), absl::Seconds(30));
  const absl::Duration client_left =
      absl::FromChrono(context->deadline() - std::chrono::system_clock::now());
  wait = std::max(absl::ZeroDuration(), std::min(wait, client_left - absl::Milliseconds(200)));
  auto leases = scheduler_->Lease(request->name(), request->session_id(), *caps,
                                  std::min<uint32_t>(request->free_slots(), 1000), wait);
  if (!leases.ok()) return Finish("LeaseActions", leases.status());
  for (auto& l : *leases) {
    if (l.action().has_wheel_build() && build_tokens_ != nullptr) {
      // The build host never sees the worker's token: it gets one for this build only.
      auto token = build_tokens_->Create(Role::kBuild, "wheel-build", l.action().build_id());
      if (token.ok()) {
        l.set_build_token(token->token());
      } else {
        ComponentLogger("coordinator")
            ->error("no build token for build '{}': {}", l.action().build_id(),
                    token.status().ToString());
      }
    }
    *response->add_leases() = std::move(l);
  }
  return Finish("LeaseActions", absl::OkStatus());
}

grpc::Status WorkerServiceImpl::CompleteActions(grpc::ServerContext* context,
                                                const farm::v1::CompleteActionsRequest* request,
                                                farm::v1::CompleteActionsResponse* response) {
  if (absl::Status s = auth_->Check(*context, "WorkerService.CompleteActions"); !s.ok())
    return Finish("CompleteActions", s);
  if (scheduler_ == nullptr) {
    return Finish("CompleteActions", absl::UnimplementedError("this coordinator runs no actions"));
  }
  // The session check proves the caller is a live worker; lease ids fence the results.
  if (auto caps = registry_->SessionCapabilities(request->name(), request->session_id());
      !caps.ok()) {
    return Finish("CompleteActions", caps.status());
  }
  std::vector<farm::v1::Completion> completions(request->completions().begin(),
                                                request->completions().end());
  auto rejected = scheduler_->Complete(request->name(), completions);
  if (!rejected.ok()) return Finish("CompleteActions", rejected.status());
  for (auto& r : *rejected) response->add_rejected_lease_ids(std::move(r));
  return Finish("CompleteActions", absl::OkStatus());
}

}  // namespace farm::coordinator
