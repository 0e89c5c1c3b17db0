// Certificates for TLS tests, made with the openssl command line (a test dependency; the
// farm itself uses libcrypto): a CA with server and client certificates, a second CA that
// signed nothing the farm trusts, and expired certificates (`openssl ca -startdate/-enddate`).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace farm::testing {

struct CertAndKey {
  std::string cert;
  std::string key;  // mode 0600
};

struct TestPki {
  std::string ca;             // trusted: signed everything below except `foreign_client`
  std::string other_ca;       // a CA the farm does not trust
  CertAndKey server;          // SAN 127.0.0.1, localhost
  CertAndKey client;          // CN=w1, clientAuth
  CertAndKey expired_server;  // valid only in January 2020
  CertAndKey expired_client;
  CertAndKey foreign_client;  // CN=w1, signed by other_ca
};

// Writes the files into `dir`. FAILED_PRECONDITION when openssl is missing or fails.
absl::StatusOr<TestPki> MakeTestPki(const std::string& dir);

}  // namespace farm::testing
