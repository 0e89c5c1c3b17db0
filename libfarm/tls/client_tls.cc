#include "libfarm/tls/client_tls.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libfarm/process/environment.h"
#include "libfarm/tls/pem_files.h"

namespace farm {

namespace {

std::string Absolute(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.string();
}

}  // namespace

ClientTlsFiles ClientTlsFilesFrom(const EnvironmentLookup& env) {
  return {env("FARM_TLS_CA"), env("FARM_TLS_CERT"), env("FARM_TLS_KEY"),
          env("FARM_TLS_SERVER_NAME")};
}

ClientTlsFiles ClientTlsFilesFromEnvironment() { return ClientTlsFilesFrom(GetEnv); }

std::vector<std::pair<std::string, std::string>> ClientTlsEnvironment(const ClientTlsFiles& files) {
  std::vector<std::pair<std::string, std::string>> env;
  if (files.ca_file.empty()) return env;
  env.emplace_back("FARM_TLS_CA", Absolute(files.ca_file));
  if (!files.cert_file.empty()) env.emplace_back("FARM_TLS_CERT", Absolute(files.cert_file));
  if (!files.key_file.empty()) env.emplace_back("FARM_TLS_KEY", Absolute(files.key_file));
  if (!files.server_name.empty()) env.emplace_back("FARM_TLS_SERVER_NAME", files.server_name);
  return env;
}

absl::StatusOr<ChannelOptions> LoadChannelOptions(const ClientTlsFiles& files) {
  ChannelOptions options;
  if (files.ca_file.empty()) {
    if (!files.cert_file.empty() || !files.key_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls-cert/--tls-key given without --tls-ca. Fix: also pass --tls-ca (or set "
          "FARM_TLS_CA) to the CA that signed the coordinator's certificate");
    }
    return options;
  }
  auto ca = ReadCertificateFile(files.ca_file, "--tls-ca");
  if (!ca.ok()) return ca.status();
  ChannelTls tls{.ca_pem = ca->pem, .server_name = files.server_name};
  if (files.cert_file.empty() != files.key_file.empty()) {
    return absl::InvalidArgumentError(
        "a client certificate needs its key: pass both --tls-cert and --tls-key (or "
        "FARM_TLS_CERT and FARM_TLS_KEY), or neither");
  }
  if (!files.cert_file.empty()) {
    auto own = ReadCertificateAndKey(files.cert_file, files.key_file);
    if (!own.ok()) return own.status();
    tls.cert_pem = own->cert.pem;
    tls.key_pem = own->key_pem;
  }
  options.tls = std::move(tls);
  return options;
}

}  // namespace farm
