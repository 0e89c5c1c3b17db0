// Which coordinator a client talks to, with which token, and how:
//   address: --coordinator, $FARM_COORDINATOR, the local farm --farm-dir/$FARM_DIR names,
//            the current local farm, 127.0.0.1:7420;
//   token:   --token-file, $FARM_TOKEN_FILE, the local farm's token when it is that farm;
//   TLS:     --tls-ca/--tls-cert/--tls-key, $FARM_TLS_*, the local farm's when it is that
//            farm (`farmctl up --tls`), else plain text.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/tls/client_tls.h"

namespace farm {

// What the caller asked for; each field empty means "not given" (see above for what then).
// farmctl fills it from its global options, farm-nvcc from its flags and environment.
struct CoordinatorChoice {
  std::string coordinator;  // --coordinator / FARM_COORDINATOR; empty: local farm or default
  std::string farm_dir;     // --farm-dir / FARM_DIR: a local farm's data dir; empty: the current
  std::string token_file;   // --token-file / FARM_TOKEN_FILE
  ClientTlsFiles tls;       // --tls-ca, --tls-cert, --tls-key / FARM_TLS_*; empty: local farm's
};

struct CoordinatorTarget {
  std::string address;
  std::string chosen_by;  // why this address: "local farm /d (current)", "--coordinator / ..."
  std::string token;
  std::string token_file;
  ClientTlsFiles tls_files;  // what `channel` was read from (ca_file empty: plain text)
  ChannelOptions channel;    // for DialCoordinator and the clients' Connect
};

absl::StatusOr<CoordinatorTarget> ResolveCoordinatorTarget(const CoordinatorChoice& choice);

}  // namespace farm
