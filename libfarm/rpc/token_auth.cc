#include "libfarm/rpc/token_auth.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/auth/method_access.h"
#include "libfarm/auth/token.h"

namespace farm {
namespace {

constexpr char kAuthorizationKey[] = "authorization";
constexpr absl::string_view kBearerPrefix = "Bearer ";

}  // namespace

std::optional<Caller> TokenVerifier::Identify(absl::string_view token) const {
  if (TokensEqual(token, farm_token_)) return Caller{.token_id = "farm", .role = Role::kAdmin};
  if (directory_ != nullptr) return directory_->Find(token);
  return std::nullopt;
}

absl::StatusOr<Caller> TokenVerifier::Authorize(const grpc::ServerContextBase& context,
                                                absl::string_view method) const {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kAuthorizationKey);
  if (it == metadata.end()) {
    return absl::UnauthenticatedError(
        "no farm token in the request. Fix: pass --token-file (or set FARM_TOKEN_FILE) to the "
        "coordinator's token file or a token made by `farmctl token create`");
  }
  absl::string_view value(it->second.data(), it->second.size());
  // Without the prefix the whole value is no token of ours: refused as unknown.
  return AuthorizeToken(
      absl::StartsWith(value, kBearerPrefix) ? value.substr(kBearerPrefix.size()) : "", method);
}

absl::StatusOr<Caller> TokenVerifier::AuthorizeToken(absl::string_view token,
                                                     absl::string_view method) const {
  std::optional<Caller> caller = token.empty() ? std::nullopt : Identify(token);
  if (!caller) {
    return absl::UnauthenticatedError(
        "the farm token does not match the coordinator's or any live token it made (wrong, "
        "revoked, or a build token whose build ended). Fix: use the coordinator's token file or "
        "a token from `farmctl token create`");
  }
  if (absl::Status s = MayCall(caller->role, method); !s.ok()) return s;
  return *caller;
}

absl::Status TokenVerifier::MayCall(Role role, absl::string_view method) const {
  return CheckMayCall(role, method, grants_);
}

absl::Status TokenVerifier::Check(const grpc::ServerContextBase& context,
                                  absl::string_view method) const {
  return Authorize(context, method).status();
}

absl::Status CheckBuildScope(const Caller& caller, absl::string_view build_id) {
  if (caller.role != Role::kBuild || caller.build_id == build_id) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "this build token belongs to build '", caller.build_id, "' and may not act for build '",
      build_id, "'. Fix: a build's farm-nvcc acts only for its own build (FARM_BUILD_ID)"));
}

void AttachToken(grpc::ClientContext& context, const std::string& token) {
  context.AddMetadata(kAuthorizationKey, std::string(kBearerPrefix) + token);
}

}  // namespace farm
