// The coordinator's TLS settings: its certificate and key (gRPC and HTTP), and the CA
// client certificates must chain to when mutual TLS is on.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace farm {

struct ServerTlsFiles {
  std::string cert_file;       // --tls-cert: PEM certificate (chain), leaf first
  std::string key_file;        // --tls-key: its PEM private key, mode 0600
  std::string client_ca_file;  // --tls-client-ca: require client certificates from this CA
};

struct ServerTls {
  ServerTlsFiles files;
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem;  // empty: clients need no certificate
  std::string subject;        // of the certificate, for the start-up log line
  absl::Time not_after;
};

// Reads and checks the files. nullopt when none is given (plain text). Errors name the
// file and the fix: missing or unparseable files, a key that others may read (chmod 600),
// a key that is not the certificate's, a certificate that has expired or is not valid yet,
// a client CA without a certificate of our own.
absl::StatusOr<std::optional<ServerTls>> LoadServerTls(const ServerTlsFiles& files);

}  // namespace farm
