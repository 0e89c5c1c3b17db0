// farmctl watch ID: live progress of a build per arch shard until it finishes. On a terminal
// it redraws one frame in place; otherwise (a log, CI) it prints a line whenever progress
// changes. Exits 0 when the build succeeded, 1 when it failed or was cancelled.
#include <iostream>

#include "cli/build_follower.h"
#include "cli/build_view.h"
#include "cli/command_support.h"
#include "libfarm/client/build_client.h"
#include "libfarm/status/exit_code.h"

namespace farm::cli {

void AddWatchCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("watch", "follow a build's progress per arch until it finishes");
  auto id = std::make_shared<std::string>();
  auto interval = std::make_shared<double>(1.0);
  cmd->add_option("ID", *id, "build id (see 'farmctl builds')")->required();
  cmd->add_option("--interval", *interval, "seconds between updates")->capture_default_str();
  cmd->callback([&ctx, id, interval] {
    auto client = BuildClient::Connect(ChoiceOf(ctx.global));
    if (!client.ok()) {
      ctx.exit_code = Fail(client.status());
      return;
    }
    auto build = FollowBuild(**client, *id, ctx.global, *interval);
    if (!build.ok()) {
      ctx.exit_code = Fail(build.status());
      return;
    }
    ctx.exit_code = build->state() == farm::v1::BUILD_STATE_SUCCEEDED ? kExitOk : kExitFailure;
    if (ctx.exit_code != kExitOk && !ctx.global.json) {
      std::cerr << "farmctl: build " << *id << " " << BuildStateName(build->state())
                << ". See 'farmctl build " << *id << "' for the failing action's output\n";
    }
  });
}

}  // namespace farm::cli
