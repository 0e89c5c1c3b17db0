// farmctl status: which farm this is (and why farmctl talks to it), the coordinator's
// identity and the fleet at a glance.
#include <iostream>

#include "cli/command_support.h"
#include "cli/worker_view.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/client/farm_client.h"

namespace farm::cli {

void AddStatusCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("status", "show the coordinator and a summary of its fleet");
  cmd->callback([&ctx] {
    auto target = ResolveCoordinatorTarget(ChoiceOf(ctx.global));
    if (!target.ok()) {
      ctx.exit_code = Fail(target.status());
      return;
    }
    auto client = FarmClient::Connect(target->address, target->token, target->channel);
    auto status = client->GetStatus();
    if (!status.ok()) {
      ctx.exit_code = Fail(status.status());
      return;
    }
    if (ctx.global.json) {
      nlohmann::json j = StatusToJson(*status);
      j["chosen_by"] = target->chosen_by;
      PrintJson(j);
    } else {
      std::cout << "farm         " << target->chosen_by << "\n" << StatusText(*status, absl::Now());
    }
  });
}

}  // namespace farm::cli
