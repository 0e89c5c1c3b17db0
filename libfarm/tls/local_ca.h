// A private certificate authority for one local farm (`farmctl up --tls`): a CA, a server
// certificate for loopback (and any other names it is given), and client certificates for
// mutual TLS. Made with libcrypto, so a farm needs no openssl binary at run time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace farm {

struct LocalCaOptions {
  std::string dir;  // created with mode 0700 if missing
  // Subject alternative names besides 127.0.0.1, ::1 and localhost (addresses or DNS names).
  std::vector<std::string> server_names;
  // One client certificate each, with the name as its common name (e.g. a worker's name).
  std::vector<std::string> client_names;
  absl::Duration leaf_validity = absl::Hours(24 * 398);
  absl::Duration ca_validity = absl::Hours(24 * 3650);
};

struct IssuedCertificate {
  std::string cert_file;  // PEM, mode 0644
  std::string key_file;   // PEM (PKCS#8, unencrypted), mode 0600
};

struct LocalCa {
  std::string ca_file;       // dir/ca.pem: what clients trust (--tls-ca, --tls-client-ca)
  IssuedCertificate server;  // dir/server.pem, server.key
  std::map<std::string, IssuedCertificate> clients;  // dir/client-NAME.pem, .key
};

// Keeps dir/ca.pem + ca.key when present (clients that stored the CA keep working) and
// issues fresh server and client certificates from it on every call.
absl::StatusOr<LocalCa> EnsureLocalCa(const LocalCaOptions& options);

}  // namespace farm
