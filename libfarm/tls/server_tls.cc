#include "libfarm/tls/server_tls.h"

#include "absl/strings/str_cat.h"
#include "libfarm/tls/pem_files.h"

namespace farm {

absl::StatusOr<std::optional<ServerTls>> LoadServerTls(const ServerTlsFiles& files) {
  if (files.cert_file.empty() && files.key_file.empty()) {
    if (!files.client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls-client-ca needs TLS. Fix: also pass --tls-cert and --tls-key");
    }
    return std::nullopt;
  }
  if (files.cert_file.empty() || files.key_file.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs both --tls-cert and --tls-key. Fix: pass the certificate and its key");
  }
  auto own = ReadCertificateAndKey(files.cert_file, files.key_file);
  if (!own.ok()) return own.status();
  ServerTls tls{.files = files,
                .cert_pem = own->cert.pem,
                .key_pem = std::move(own->key_pem),
                .subject = own->cert.subject,
                .not_after = own->cert.not_after};
  if (!files.client_ca_file.empty()) {
    auto ca = ReadCertificateFile(files.client_ca_file, "--tls-client-ca");
    if (!ca.ok()) return ca.status();
    tls.client_ca_pem = ca->pem;
  }
  return tls;
}

}  // namespace farm
