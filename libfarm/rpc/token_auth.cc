#include "libfarm/rpc/token_auth.h"

#include "absl/strings/match.h"
#include "libfarm/auth/token.h"

namespace farm {
namespace {

constexpr char kAuthorizationKey[] = "authorization";
constexpr absl::string_view kBearerPrefix = "Bearer ";

}  // namespace

absl::Status TokenVerifier::Check(const grpc::ServerContext& context) const {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kAuthorizationKey);
  if (it == metadata.end()) {
    return absl::UnauthenticatedError(
        "no farm token in the request. Fix: pass --token-file (or set FARM_TOKEN_FILE) to the "
        "coordinator's token file");
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::StartsWith(value, kBearerPrefix) ||
      !TokensEqual(value.substr(kBearerPrefix.size()), token_)) {
    return absl::UnauthenticatedError(
        "the farm token does not match the coordinator's. Fix: use the coordinator's token file");
  }
  return absl::OkStatus();
}

void AttachToken(grpc::ClientContext& context, const std::string& token) {
  context.AddMetadata(kAuthorizationKey, std::string(kBearerPrefix) + token);
}

}  // namespace farm
