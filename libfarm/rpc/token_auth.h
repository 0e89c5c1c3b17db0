// Token authentication and role checks for every gRPC call between farm parties. The token
// travels as "authorization: Bearer <token>" metadata; a server handler authorizes the call
// (token known, role allowed for the method by libfarm/auth/method_access.h) before doing
// anything else.
#pragma once

#include <optional>
#include <string>

#include <grpcpp/client_context.h>
#include <grpcpp/server_context.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/auth/method_access.h"
#include "libfarm/auth/role.h"

namespace farm {

// Who a call comes from.
struct Caller {
  std::string token_id;  // "farm" for the coordinator's token file, else the token's id
  Role role = Role::kRead;
  std::string build_id;  // a build token's build; empty otherwise
};

// Tokens beyond the coordinator's token file (coordinator/tokens/token_store.h).
class TokenDirectory {
 public:
  virtual ~TokenDirectory() = default;
  // The caller a valid token stands for; nullopt for an unknown, revoked or expired token.
  virtual std::optional<Caller> Find(absl::string_view token) const = 0;
};

class TokenVerifier {
 public:
  // `farm_token` is the admin token of the coordinator's token file; `directory` (not
  // owned, may be null) knows the others; `grants` are the operator's beyond the table
  // (checked with CheckGrants by whoever takes them from the command line).
  explicit TokenVerifier(std::string farm_token, const TokenDirectory* directory = nullptr,
                         MethodGrants grants = {})
      : farm_token_(std::move(farm_token)), directory_(directory), grants_(std::move(grants)) {}

  // The caller, when the call carries a known token whose role may call `method`
  // ("Service.Method"): UNAUTHENTICATED without a known token, PERMISSION_DENIED for a role
  // that may not.
  absl::StatusOr<Caller> Authorize(const grpc::ServerContextBase& context,
                                   absl::string_view method) const;
  // Authorize, for handlers that need only the verdict.
  absl::Status Check(const grpc::ServerContextBase& context, absl::string_view method) const;
  // Authorize for a bare token (HTTP's bearer tokens and upload passwords), `method` being
  // the route's row ("HTTP.Read").
  absl::StatusOr<Caller> AuthorizeToken(absl::string_view token, absl::string_view method) const;
  // OK when `role` may call `method` here (the table and the grants): for a service that
  // tells a caller what it may do (REAPI's GetCapabilities), by the same rule Authorize uses.
  absl::Status MayCall(Role role, absl::string_view method) const;

 private:
  // The caller a token stands for; nullopt when unknown.
  std::optional<Caller> Identify(absl::string_view token) const;

  std::string farm_token_;
  const TokenDirectory* directory_;
  MethodGrants grants_;
};

// OK unless `caller` holds a build token of another build than `build_id`.
absl::Status CheckBuildScope(const Caller& caller, absl::string_view build_id);

// Adds the token to an outgoing call.
void AttachToken(grpc::ClientContext& context, const std::string& token);

}  // namespace farm
