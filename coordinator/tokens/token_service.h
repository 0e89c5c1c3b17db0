// farmctl token create|list|revoke: the TokenService over the coordinator's TokenStore.
#pragma once

#include "coordinator/rpc_gate.h"
#include "coordinator/tokens/token_store.h"
#include "farm/v1/tokens.grpc.pb.h"

namespace farm::coordinator {

class TokenServiceImpl final : public farm::v1::TokenService::Service {
 public:
  TokenServiceImpl(const RpcGate* gate, TokenStore* tokens) : gate_(gate), tokens_(tokens) {}

  grpc::Status CreateToken(grpc::ServerContext* context,
                           const farm::v1::CreateTokenRequest* request,
                           farm::v1::CreateTokenResponse* response) override;
  grpc::Status ListTokens(grpc::ServerContext* context, const farm::v1::ListTokensRequest* request,
                          farm::v1::ListTokensResponse* response) override;
  grpc::Status RevokeToken(grpc::ServerContext* context,
                           const farm::v1::RevokeTokenRequest* request,
                           farm::v1::RevokeTokenResponse* response) override;

 private:
  const RpcGate* gate_;
  TokenStore* tokens_;
};

}  // namespace farm::coordinator
