#include "libfarm/rpc/channel.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

namespace farm {
namespace {

std::shared_ptr<grpc::ChannelCredentials> Credentials(const ChannelOptions& options) {
  if (!options.tls) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = options.tls->ca_pem;
  ssl.pem_cert_chain = options.tls->cert_pem;
  ssl.pem_private_key = options.tls->key_pem;
  return grpc::SslCredentials(ssl);
}

}  // namespace

std::shared_ptr<grpc::Channel> DialCoordinator(const std::string& address,
                                               const ChannelOptions& options) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  if (options.tls && !options.tls->server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls->server_name);
  }
  return grpc::CreateCustomChannel(address, Credentials(options), args);
}

}  // namespace farm
