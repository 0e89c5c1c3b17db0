// Token authentication for every gRPC call between farm parties. The token travels as
// "authorization: Bearer <token>" metadata; a server handler checks it before doing anything.
#pragma once

#include <string>

#include <grpcpp/client_context.h>
#include <grpcpp/server_context.h>

#include "absl/status/status.h"

namespace farm {

class TokenVerifier {
 public:
  explicit TokenVerifier(std::string token) : token_(std::move(token)) {}

  // UNAUTHENTICATED when the call carries no token or a different one.
  absl::Status Check(const grpc::ServerContext& context) const;

 private:
  std::string token_;
};

// Adds the token to an outgoing call.
void AttachToken(grpc::ClientContext& context, const std::string& token);

}  // namespace farm
