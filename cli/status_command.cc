// farmctl status: the coordinator's identity and the fleet at a glance.
#include <iostream>

#include "cli/command_support.h"
#include "cli/worker_view.h"

namespace farm::cli {

void AddStatusCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("status", "show the coordinator and a summary of its fleet");
  cmd->callback([&ctx] {
    auto client = ConnectToFarm(ctx.global);
    if (!client.ok()) {
      ctx.exit_code = Fail(client.status());
      return;
    }
    auto status = (*client)->GetStatus();
    if (!status.ok()) {
      ctx.exit_code = Fail(status.status());
      return;
    }
    if (ctx.global.json) {
      PrintJson(StatusToJson(*status));
    } else {
      std::cout << StatusText(*status, absl::Now());
    }
  });
}

}  // namespace farm::cli
