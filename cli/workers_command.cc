// farmctl workers: the fleet, one line per worker.
#include <iostream>

#include "cli/command_support.h"
#include "cli/worker_view.h"
#include "libfarm/client/build_client.h"

namespace farm::cli {

void AddWorkersCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand(
      "workers", "list workers with platform, CUDA, SMs, state, load and current actions");
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
    // What each worker runs now comes from the build status API.
    RunningByWorker running;
    auto builds = BuildClient::Connect(ChoiceOf(ctx.global));
    if (!builds.ok()) {
      ctx.exit_code = Fail(builds.status());
      return;
    }
    auto actions = (*builds)->ListActions("", farm::v1::ACTION_STATE_RUNNING);
    if (!actions.ok()) {
      ctx.exit_code = Fail(actions.status());
      return;
    }
    running = GroupByWorker(*actions);
    if (ctx.global.json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& w : workers->workers()) {
        list.push_back(WorkerToJson(w, running.count(w.name())
                                           ? running.at(w.name())
                                           : std::vector<farm::v1::ActionEntry>()));
      }
      PrintJson(list);
    } else {
      std::cout << WorkersTable(*workers, absl::Now(), running);
    }
  });
}

}  // namespace farm::cli
