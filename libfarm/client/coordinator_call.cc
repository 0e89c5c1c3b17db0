#include "libfarm/client/coordinator_call.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/token_auth.h"

namespace farm {

void CoordinatorCall::Prepare(grpc::ClientContext& ctx, absl::Duration at_least) const {
  AttachToken(ctx, token_);
  ctx.set_deadline(std::chrono::system_clock::now() +
                   absl::ToChronoMilliseconds(std::max(timeout_, at_least)));
}

absl::Status CoordinatorCall::Explain(const grpc::Status& status) const {
  absl::Status s = FromGrpcStatus(status);
  if (s.code() == absl::StatusCode::kUnimplemented) {
    return absl::Status(s.code(), absl::StrCat("the coordinator at ", address_,
                                               " does not offer this call; upgrade it"));
  }
  return ExplainUnreachable(s, address_);
}

absl::Status ExplainUnreachable(const absl::Status& s, const std::string& address) {
  if (s.code() != absl::StatusCode::kUnavailable &&
      s.code() != absl::StatusCode::kDeadlineExceeded) {
    return s;
  }
  const std::string lower = absl::AsciiStrToLower(s.message());
  // gRPC reports a failed TLS handshake as UNAVAILABLE too; "start one" would mislead.
  if (absl::StrContains(lower, "ssl") || absl::StrContains(lower, "handshake") ||
      absl::StrContains(lower, "certificate")) {
    return absl::Status(
        s.code(),
        absl::StrCat("TLS with the coordinator", address.empty() ? "" : " at ", address,
                     " failed (", s.message(),
                     "). Fix: --tls-ca (FARM_TLS_CA) must be the CA that signed the "
                     "coordinator's certificate, which must be current and name the host you "
                     "dial; a coordinator with --tls-client-ca also needs --tls-cert and "
                     "--tls-key (FARM_TLS_CERT, FARM_TLS_KEY)"));
  }
  return absl::Status(
      s.code(), absl::StrCat("cannot reach the coordinator", address.empty() ? "" : " at ", address,
                             " (", s.message(),
                             "). Fix: start one ('farmctl up' for a local farm) or point "
                             "--coordinator / FARM_COORDINATOR at it; if it serves TLS, pass "
                             "--tls-ca (FARM_TLS_CA), and --tls-cert/--tls-key if it requires "
                             "client certificates"));
}

}  // namespace farm
