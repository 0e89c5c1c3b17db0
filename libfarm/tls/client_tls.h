// A client's TLS settings (workers, farmctl, farm-nvcc): which files, and reading them into
// the ChannelOptions DialCoordinator takes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/process/environment.h"
#include "libfarm/rpc/channel.h"

namespace farm {

struct ClientTlsFiles {
  std::string ca_file;    // --tls-ca / FARM_TLS_CA; empty: plain text
  std::string cert_file;  // --tls-cert / FARM_TLS_CERT: client certificate for mTLS
  std::string key_file;   // --tls-key / FARM_TLS_KEY
  // FARM_TLS_SERVER_NAME: the name the coordinator's certificate must carry when the address
  // dialled does not say it (a Unix socket relayed to the coordinator); empty: the address's.
  std::string server_name;
};

// FARM_TLS_CA, FARM_TLS_CERT, FARM_TLS_KEY and FARM_TLS_SERVER_NAME (each empty when unset)
// as `env` has them.
ClientTlsFiles ClientTlsFilesFrom(const EnvironmentLookup& env);

// ClientTlsFilesFrom this process's environment.
ClientTlsFiles ClientTlsFilesFromEnvironment();

// The environment a child client (farm-nvcc under a worker) needs to dial the same way:
// FARM_TLS_* set to the absolute paths of the given files; nothing for plain text.
std::vector<std::pair<std::string, std::string>> ClientTlsEnvironment(const ClientTlsFiles& files);

// Reads and checks the files: no CA means plain text; a certificate needs its key (and
// vice versa), must be current, and the key must be private (chmod 600) and match it.
// Errors name the file and the fix (exit code 2 through ExitCodeForStatus).
absl::StatusOr<ChannelOptions> LoadChannelOptions(const ClientTlsFiles& files);

}  // namespace farm
