#include "coordinator/tokens/token_service.h"

#include "coordinator/rpc_outcome.h"
#include "libfarm/rpc/request_limits.h"

namespace farm::coordinator {

grpc::Status TokenServiceImpl::CreateToken(grpc::ServerContext* context,
                                           const farm::v1::CreateTokenRequest* request,
                                           farm::v1::CreateTokenResponse* response) {
  absl::Status s = auth_->Check(*context, "TokenService.CreateToken");
  if (s.ok()) s = CheckFieldLength("role", request->role(), kMaxNameBytes);
  absl::StatusOr<Role> role = ParseCreatableRole(request->role());
  if (s.ok()) s = role.status();
  if (s.ok()) {
    auto made = tokens_->Create(*role, request->name());
    if (made.ok()) *response = std::move(*made);
    s = made.status();
  }
  return FinishRpc(*metrics_, "CreateToken", s);
}

grpc::Status TokenServiceImpl::ListTokens(grpc::ServerContext* context,
                                          const farm::v1::ListTokensRequest* /*request*/,
                                          farm::v1::ListTokensResponse* response) {
  absl::Status s = auth_->Check(*context, "TokenService.ListTokens");
  if (s.ok()) {
    for (auto& record : tokens_->List()) *response->add_tokens() = std::move(record);
  }
  return FinishRpc(*metrics_, "ListTokens", s);
}

grpc::Status TokenServiceImpl::RevokeToken(grpc::ServerContext* context,
                                           const farm::v1::RevokeTokenRequest* request,
                                           farm::v1::RevokeTokenResponse* /*response*/) {
  absl::Status s = auth_->Check(*context, "TokenService.RevokeToken");
  if (s.ok()) s = CheckFieldLength("token id", request->id(), kMaxNameBytes);
  if (s.ok()) s = tokens_->Revoke(request->id());
  return FinishRpc(*metrics_, "RevokeToken", s);
}

}  // namespace farm::coordinator
