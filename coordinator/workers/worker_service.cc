#include "coordinator/workers/worker_service.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/gpu/gpu_device.h"
#include "libfarm/host/shared_libraries.h"
#include "libfarm/logging/logger.h"
#include "libfarm/rpc/request_limits.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/text/utf8_fields.h"

namespace farm::coordinator {
namespace {

// ", certificate CN=<name>" when the worker came over mutual TLS; "" otherwise.
std::string PeerCertificateNote(const grpc::ServerContextBase& context) {
  auto auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return "";
  for (const auto& cn : auth->FindPropertyValues("x509_common_name")) {
    return absl::StrCat(", certificate CN=", std::string(cn.data(), cn.size()));
  }
  return ", certificate without CN";
}

// The worker a call acts for, and the token it carries: the registry checks the two match.
template <typename Request>
WorkerCaller CallerOf(const Request& request, const Caller& caller) {
  return {request.name(), request.session_id(), caller.token_id};
}

// The RegisterRequest in `bytes`. Text that is not UTF-8, which protobuf refuses to parse, is
// INVALID_ARGUMENT naming each such field, with the fix.
absl::StatusOr<farm::v1::RegisterRequest> ParseRegisterRequest(const grpc::ByteBuffer& bytes) {
  std::vector<grpc::Slice> slices;
  if (grpc::Status s = bytes.Dump(&slices); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read the request: ", s.error_message()));
  }
  std::string data;
  for (const grpc::Slice& slice : slices) {
    data.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  farm::v1::RegisterRequest request;
  if (request.ParseFromString(data)) return request;
  const std::vector<InvalidUtf8Field> invalid =
      InvalidUtf8FieldsOf(data, *farm::v1::RegisterRequest::descriptor());
  if (invalid.empty()) {
    return absl::InvalidArgumentError(
        "the request is not a RegisterRequest. Fix: use a farm-worker of this farm's version");
  }
  std::vector<std::string> named;
  bool labels = false;
  for (const InvalidUtf8Field& f : invalid) {
    named.push_back(absl::StrCat(f.path, " (\"", f.value, "\")"));
    labels = labels || absl::StartsWith(f.path, "capabilities.labels");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "the worker's ", absl::StrJoin(named, ", "), invalid.size() == 1 ? " is" : " are",
      " not UTF-8, which protobuf text must be; nothing was registered. Fix: ",
      labels ? "pass --labels as UTF-8 text"
             : "use this version's farm-worker, which sends such text escaped"));
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

WorkerServiceImpl::WorkerServiceImpl(const RpcGate* gate, WorkerRegistry* registry,
                                     Scheduler* scheduler, TokenStore* build_tokens)
    : gate_(gate), registry_(registry), scheduler_(scheduler), build_tokens_(build_tokens) {}

uint32_t WorkerServiceImpl::HeartbeatIntervalMs() const {
  // Three heartbeats per timeout, so one lost packet does not mark a worker lost.
  return static_cast<uint32_t>(
      std::max<int64_t>(100, absl::ToInt64Milliseconds(registry_->timeout()) / 3));
}

grpc::ServerUnaryReactor* WorkerServiceImpl::Register(grpc::CallbackServerContext* context,
                                                      const grpc::ByteBuffer* request,
                                                      grpc::ByteBuffer* response) {
  farm::v1::RegisterResponse reply;
  grpc::Status status =
      gate_->Serve(*context, "WorkerService.Register", [&](const Caller& caller) -> absl::Status {
        FARM_ASSIGN_OR_RETURN(const farm::v1::RegisterRequest parsed,
                              ParseRegisterRequest(*request));
        return RegisterWorker(*context, parsed, caller, &reply);
      });
  if (status.ok()) {
    bool own_buffer = false;
    status = grpc::SerializationTraits<farm::v1::RegisterResponse>::Serialize(reply, response,
                                                                              &own_buffer);
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

absl::Status WorkerServiceImpl::RegisterWorker(const grpc::ServerContextBase& context,
                                               const farm::v1::RegisterRequest& request,
                                               const Caller& caller,
                                               farm::v1::RegisterResponse* response) {
  FARM_RETURN_IF_ERROR(ValidateWorkerName(request.name()));
  if (request.capabilities().slots() == 0) {
    return absl::InvalidArgumentError("a worker must offer at least 1 slot");
  }
  FARM_RETURN_IF_ERROR(CheckWorkerLabels(request.capabilities()));
  // The list is the worker's word and lands in every fleet listing: bounded, names only.
  FARM_RETURN_IF_ERROR(ValidateAdvertisedLibraries(
      {request.capabilities().libraries().begin(), request.capabilities().libraries().end()}));
  FARM_RETURN_IF_ERROR(CheckAdvertisedGpus(request.capabilities()));
  if (request.instance_id().size() > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("instance_id is ", request.instance_id().size(),
                     " bytes; at most 64. Fix: use this version's farm-worker"));
  }
  FARM_ASSIGN_OR_RETURN(auto session,
                        registry_->Register(request.name(), request.capabilities(), context.peer(),
                                            request.instance_id(), caller.token_id));
  ComponentLogger("coordinator")
      ->info(
          "worker '{}' registered from {}{} ({} {}, glibc {}, {} slots, {} CUDA toolkit(s), "
          "GPUs {}, {})",
          request.name(), context.peer(), PeerCertificateNote(context), request.capabilities().os(),
          request.capabilities().cpu_arch(), request.capabilities().glibc(),
          request.capabilities().slots(), request.capabilities().cuda_size(),
          GpuSummary(request.capabilities().gpus()),
          request.capabilities().sandboxed() ? "sandboxed" : "NOT sandboxed");
  response->set_session_id(session);
  response->set_heartbeat_interval_ms(HeartbeatIntervalMs());
  return absl::OkStatus();
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext* context,
                                          const farm::v1::HeartbeatRequest* request,
                                          farm::v1::HeartbeatResponse* response) {
  return gate_->Serve(*context, "WorkerService.Heartbeat", [&](const Caller& caller) {
    absl::Status s = registry_->Heartbeat(CallerOf(*request, caller), request->draining(),
                                          request->slots_in_use());
    response->set_heartbeat_interval_ms(HeartbeatIntervalMs());
    if (s.ok() && scheduler_ != nullptr) {
      std::vector<std::string> held(request->lease_ids().begin(), request->lease_ids().end());
      for (auto& revoked : scheduler_->Renew(request->name(), request->session_id(), held)) {
        response->add_revoked_lease_ids(std::move(revoked));
      }
    }
    return s;
  });
}

grpc::Status WorkerServiceImpl::Leave(grpc::ServerContext* context,
                                      const farm::v1::LeaveRequest* request,
                                      farm::v1::LeaveResponse*) {
  return gate_->Serve(*context, "WorkerService.Leave", [&](const Caller& caller) {
    return registry_->Leave(CallerOf(*request, caller));
  });
}

grpc::Status WorkerServiceImpl::LeaseActions(grpc::ServerContext* context,
                                             const farm::v1::LeaseActionsRequest* request,
                                             farm::v1::LeaseActionsResponse* response) {
  return gate_->Serve(*context, "WorkerService.LeaseActions", [&](const Caller& caller) {
    if (scheduler_ == nullptr) return absl::UnimplementedError("this coordinator runs no actions");
    FARM_ASSIGN_OR_RETURN(auto caps, registry_->SessionCapabilities(CallerOf(*request, caller)));
    // Long-poll, but never past the client's deadline.
    absl::Duration wait = std::min(absl::Milliseconds(request->wait_ms()), absl::Seconds(30));
    const absl::Duration client_left =
        absl::FromChrono(context->deadline() - std::chrono::system_clock::now());
    wait = std::max(absl::ZeroDuration(), std::min(wait, client_left - absl::Milliseconds(200)));
    FARM_ASSIGN_OR_RETURN(auto leases,
                          scheduler_->Lease(request->name(), request->session_id(), caps,
                                            std::min<uint32_t>(request->free_slots(), 1000), wait));
    for (auto& l : leases) {
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
    return absl::OkStatus();
  });
}

grpc::Status WorkerServiceImpl::CompleteActions(grpc::ServerContext* context,
                                                const farm::v1::CompleteActionsRequest* request,
                                                farm::v1::CompleteActionsResponse* response) {
  return gate_->Serve(*context, "WorkerService.CompleteActions", [&](const Caller& caller) {
    if (scheduler_ == nullptr) return absl::UnimplementedError("this coordinator runs no actions");
    // The token and session prove the caller is this live worker; lease ids fence the results.
    FARM_RETURN_IF_ERROR(registry_->SessionCapabilities(CallerOf(*request, caller)).status());
    std::vector<farm::v1::Completion> completions(request->completions().begin(),
                                                  request->completions().end());
    FARM_ASSIGN_OR_RETURN(auto rejected, scheduler_->Complete(request->name(), completions));
    for (auto& r : rejected) response->add_rejected_lease_ids(std::move(r));
    return absl::OkStatus();
  });
}

}  // namespace farm::coordinator
