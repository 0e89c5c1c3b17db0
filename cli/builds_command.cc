// farmctl builds: the newest builds, one line each.
#include <iostream>

#include "cli/build_view.h"
#include "cli/command_support.h"
#include "libfarm/client/build_client.h"

namespace farm::cli {

void AddBuildsCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("builds", "list builds, newest first, with their progress");
  auto limit = std::make_shared<uint32_t>(50);
  cmd->add_option("--limit", *limit, "show at most this many builds")->capture_default_str();
  cmd->callback([&ctx, limit] {
    auto client = BuildClient::Connect(ChoiceOf(ctx.global));
    if (!client.ok()) {
      ctx.exit_code = Fail(client.status());
      return;
    }
    auto builds = (*client)->ListBuilds(*limit);
    if (!builds.ok()) {
      ctx.exit_code = Fail(builds.status());
      return;
    }
    if (ctx.global.json) {
      PrintJson(ProtoToJson(*builds));
    } else {
      std::cout << BuildsTable(*builds, absl::Now());
    }
  });
}

}  // namespace farm::cli
