#include "coordinator/rpc_gate.h"

#include <string>

#include "libfarm/disk/disk_space.h"
#include "libfarm/logging/logger.h"
#include "libfarm/rpc/grpc_status.h"

namespace farm::coordinator {

RpcGate::RpcGate(const TokenVerifier* auth, MetricsRegistry* metrics, CallAdmission* admission)
    : auth_(auth), metrics_(metrics) {
  if (admission == nullptr) {
    own_admission_ = std::make_unique<CallAdmission>(4096, metrics);
    admission = own_admission_.get();
  }
  admission_ = admission;
}

grpc::Status RpcGate::Serve(const grpc::ServerContextBase& context, absl::string_view method,
                            absl::FunctionRef<absl::Status(const Caller&)> body) const {
  absl::StatusOr<Caller> caller = auth_->Authorize(context, method);
  return Finish(method, caller.ok() ? body(*caller) : caller.status());
}

grpc::Status RpcGate::Serve(const grpc::ServerContextBase& context, absl::string_view method,
                            absl::FunctionRef<absl::Status()> body) const {
  return Serve(context, method, [&](const Caller&) { return body(); });
}

grpc::Status RpcGate::ServeLongPoll(
    const grpc::ServerContextBase& context, absl::string_view method,
    absl::FunctionRef<absl::Status(const Caller&, CallAdmission::Ticket)> body) const {
  absl::StatusOr<Caller> caller = auth_->Authorize(context, method);
  if (!caller.ok()) return Finish(method, caller.status());
  absl::StatusOr<CallAdmission::Ticket> place = admission_->AdmitLongPoll(caller->token_id);
  if (!place.ok()) return Finish(method, place.status());
  absl::Status taken = body(*caller, *std::move(place));
  if (!taken.ok()) return Finish(method, taken);
  return grpc::Status::OK;  // counted when answered
}

bool RpcGate::Allows(const Caller& caller, absl::string_view method) const {
  return auth_->MayCall(caller.role, method).ok();
}

grpc::Status RpcGate::Finish(absl::string_view method, const absl::Status& status) const {
  // The label is the method alone ("Execute"), as /metrics has always shown it.
  const absl::string_view::size_type dot = method.rfind('.');
  const std::string label(dot == absl::string_view::npos ? method : method.substr(dot + 1));
  metrics_
      ->GetCounter("farm_rpc_requests_total", "gRPC requests handled, by method and status code.",
                   {{"method", label}, {"code", absl::StatusCodeToString(status.code())}})
      ->Increment();
  // A full disk fails every upload: the operator hears of it, with the path, once a minute.
  static DiskFullReporter* const disk_full =
      new DiskFullReporter(ComponentLogger("coordinator"), absl::Minutes(1));
  disk_full->Report(status);
  return ToGrpcStatus(status);
}

}  // namespace farm::coordinator
