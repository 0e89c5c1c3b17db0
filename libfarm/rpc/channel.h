// Client channels to the coordinator: every workers', farmctl's and farm-nvcc's channel
// comes from DialCoordinator, so transport security is decided in one place.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <grpcpp/channel.h>

namespace farm {

// TLS towards the coordinator, as PEM text (libfarm/tls/client_tls.h reads and checks the
// files). The coordinator's certificate must chain to `ca_pem` and name the host dialled.
struct ChannelTls {
  std::string ca_pem;
  // Both or neither: the client certificate a coordinator with --tls-client-ca requires.
  std::string cert_pem;
  std::string key_pem;
  // Checked against the certificate instead of the dialled host (a relayed Unix socket's
  // address names no host); empty: the dialled host.
  std::string server_name;
};

struct ChannelOptions {
  std::optional<ChannelTls> tls;  // unset: plain text (fine on loopback only)
};

// A channel with keepalive, so a dead coordinator is noticed while a call is idle.
std::shared_ptr<grpc::Channel> DialCoordinator(const std::string& address,
                                               const ChannelOptions& options = {});

}  // namespace farm
