#include "cli/command_support.h"

#include <iostream>

#include "libfarm/client/coordinator_target.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/exit_code.h"

namespace farm::cli {

CoordinatorChoice ChoiceOf(const GlobalOptions& global) {
  return CoordinatorChoice{.coordinator = global.coordinator,
                           .farm_dir = global.farm_dir,
                           .token_file = global.token_file,
                           .tls = global.tls};
}

absl::StatusOr<std::unique_ptr<FarmClient>> ConnectToFarm(const GlobalOptions& global) {
  auto target = ResolveCoordinatorTarget(ChoiceOf(global));
  if (!target.ok()) return target.status();
  return FarmClient::Connect(target->address, target->token, target->channel);
}

int Fail(const absl::Status& status) {
  ComponentLogger("farmctl")->error("{}", status.message());
  return ExitCodeForStatus(status);
}

void PrintJson(const nlohmann::json& value) { std::cout << value.dump(2) << std::endl; }

}  // namespace farm::cli
