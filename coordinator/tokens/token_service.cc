#include "coordinator/tokens/token_service.h"

#include "libfarm/rpc/request_limits.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {

grpc::Status TokenServiceImpl::CreateToken(grpc::ServerContext* context,
                                           const farm::v1::CreateTokenRequest* request,
                                           farm::v1::CreateTokenResponse* response) {
  return gate_->Serve(*context, "TokenService.CreateToken", [&] {
    FARM_RETURN_IF_ERROR(CheckFieldLength("role", request->role(), kMaxNameBytes));
    FARM_ASSIGN_OR_RETURN(const Role role, ParseCreatableRole(request->role()));
    FARM_ASSIGN_OR_RETURN(*response, tokens_->Create(role, request->name()));
    return absl::OkStatus();
  });
}

grpc::Status TokenServiceImpl::ListTokens(grpc::ServerContext* context,
                                          const farm::v1::ListTokensRequest* /*request*/,
                                          farm::v1::ListTokensResponse* response) {
  return gate_->Serve(*context, "TokenService.ListTokens", [&] {
    for (auto& record : tokens_->List()) *response->add_tokens() = std::move(record);
    return absl::OkStatus();
  });
}

grpc::Status TokenServiceImpl::RevokeToken(grpc::ServerContext* context,
                                           const farm::v1::RevokeTokenRequest* request,
                                           farm::v1::RevokeTokenResponse* /*response*/) {
  return gate_->Serve(*context, "TokenService.RevokeToken", [&] {
    FARM_RETURN_IF_ERROR(CheckFieldLength("token id", request->id(), kMaxNameBytes));
    return tokens_->Revoke(request->id());
  });
}

}  // namespace farm::coordinator
