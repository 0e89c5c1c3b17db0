// Reading TLS certificates and private keys from PEM files, checked up front so that a bad
// file stops a daemon at start with an error naming the file and the fix, rather than as
// a handshake failure on every connection later.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace farm {

// What a certificate file held, for checks and log lines.
struct CertificateFile {
  std::string pem;      // the file's bytes: one certificate or a chain, leaf first
  std::string subject;  // of the first certificate, one line ("CN=...")
  absl::Time not_before;
  absl::Time not_after;
};

// Reads `path` as one or more PEM certificates. NOT_FOUND when it cannot be read,
// INVALID_ARGUMENT when it holds no parseable certificate. `what` names the flag in errors.
absl::StatusOr<CertificateFile> ReadCertificateFile(const std::string& path,
                                                    const std::string& what);

// Like ReadCertificateFile, and FAILED_PRECONDITION when the first certificate is not valid
// at `now` (expired, or not valid yet): our own certificate must be usable.
absl::StatusOr<CertificateFile> ReadCurrentCertificateFile(const std::string& path,
                                                           const std::string& what,
                                                           absl::Time now = absl::Now());

// Reads a PEM private key. PERMISSION_DENIED when group or others may read or write it
// (mode & 077), naming `chmod 600` as the fix; NOT_FOUND / INVALID_ARGUMENT as above.
absl::StatusOr<std::string> ReadPrivateKeyFile(const std::string& path, const std::string& what);

// INVALID_ARGUMENT unless `key_pem` is the private key of the first certificate in `cert`.
absl::Status CheckKeyMatchesCertificate(const CertificateFile& cert, const std::string& cert_path,
                                        const std::string& key_pem, const std::string& key_path);

struct CertificateAndKey {
  CertificateFile cert;
  std::string key_pem;
};

// Our own certificate (--tls-cert, currently valid) and its private key (--tls-key, not
// readable by others), checked to belong together.
absl::StatusOr<CertificateAndKey> ReadCertificateAndKey(const std::string& cert_path,
                                                        const std::string& key_path);

// OpenSSL's last error as text, clearing its queue so it does not leak into later calls.
std::string OpenSslError();

}  // namespace farm
