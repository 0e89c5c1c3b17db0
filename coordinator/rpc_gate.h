// The one way a coordinator gRPC handler runs. RpcGate::Serve checks the call's token against
// the method's row in libfarm/auth/method_access.cc before the handler's body runs, counts the
// outcome in farm_rpc_requests_total{method, code}, and turns the body's absl::Status into the
// call's grpc::Status. Services hold an RpcGate instead of the TokenVerifier, so the Caller is
// reachable only through Serve; rpc_gate_test calls every RPC of every proto without a token
// and fails for a handler that does not go through it.
#pragma once

#include <memory>

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "coordinator/call_admission.h"
#include "libfarm/metrics/registry.h"
#include "libfarm/rpc/token_auth.h"

namespace farm::coordinator {

class RpcGate {
 public:
  // Neither is owned; both outlive the gate. Long polls are admitted by `admission` when
  // given (also not owned), else by the gate's own CallAdmission of 4,096.
  RpcGate(const TokenVerifier* auth, MetricsRegistry* metrics, CallAdmission* admission = nullptr);

  // Serves one call of `method`, named "Service.Method" as method_access.cc lists it (and
  // counted under "Method"): runs `body` only when the call carries a known token whose role
  // may call `method`, with the Caller it stands for (build tokens: CheckBuildScope).
  // Returns the refusal or the body's status, for gRPC. Streaming handlers read and write
  // their streams inside `body`; a callback handler (WorkerService.Register) passes its
  // CallbackServerContext.
  grpc::Status Serve(const grpc::ServerContextBase& context, absl::string_view method,
                     absl::FunctionRef<absl::Status(const Caller&)> body) const;
  // Serve, for a body that does not need the Caller.
  grpc::Status Serve(const grpc::ServerContextBase& context, absl::string_view method,
                     absl::FunctionRef<absl::Status()> body) const;
  // For a long poll answered later, by a callback handler: checks the token as Serve does,
  // takes a place among the waiting calls (CallAdmission) and runs `body` with the Caller and
  // the place, which the body keeps until the call is answered. A refusal or the body's error
  // is counted and returned for the handler to finish with at once; OK means the body took
  // the call on, and its answer goes through Finish.
  grpc::Status ServeLongPoll(
      const grpc::ServerContextBase& context, absl::string_view method,
      absl::FunctionRef<absl::Status(const Caller&, CallAdmission::Ticket)> body) const;
  // Whether `caller` may call `method` by the rule Serve applies; for a handler that tells
  // its caller what it may do (REAPI's GetCapabilities), never to authorize a call.
  bool Allows(const Caller& caller, absl::string_view method) const;
  // Counts a call's outcome and converts it for gRPC (Serve does it for its bodies).
  grpc::Status Finish(absl::string_view method, const absl::Status& status) const;

 private:
  const TokenVerifier* auth_;
  MetricsRegistry* metrics_;
  std::unique_ptr<CallAdmission> own_admission_;
  CallAdmission* admission_;
};

}  // namespace farm::coordinator
