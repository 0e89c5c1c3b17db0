// Which coordinator a client talks to and with which token:
//   address: --coordinator, $FARM_COORDINATOR, the current local farm, 127.0.0.1:7420;
//   token:   --token-file, $FARM_TOKEN_FILE, the local farm's token when it is that farm.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cli/cli_context.h"

namespace farm::cli {

struct CoordinatorTarget {
  std::string address;
  std::string token;
  std::string token_file;
};

absl::StatusOr<CoordinatorTarget> ResolveCoordinatorTarget(const GlobalOptions& global);

}  // namespace farm::cli
