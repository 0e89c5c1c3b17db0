// farmctl workers: the fleet, one line per worker.
#include <iostream>

#include "cli/command_support.h"
#include "cli/worker_view.h"

namespace farm::cli {

void AddWorkersCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("workers", "list workers with platform, CUDA, SMs and state");
  cmd->callback([&ctx] {
    auto client = ConnectToFarm(ctx.global);
    if (!client.ok()) {
      ctx.exit_code = Fail(client.status());
      return;
    }
    auto workers = (*client)->ListWorkers();
    if (!workers.ok()) {
      ctx.exit_code = Fail(workers.status());
      return;
    }
    if (ctx.global.json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& w : workers->workers()) list.push_back(WorkerToJson(w));
      PrintJson(list);
    } else {
      std::cout << WorkersTable(*workers, absl::Now());
    }
  });
}

}  // namespace farm::cli
