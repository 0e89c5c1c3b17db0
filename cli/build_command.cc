// farmctl build ID: one build in full — shards per arch, workers, durations, wheel sizes
// per arch, the verification table and the failing action's error text.
#include <iostream>

#include "cli/build_view.h"
#include "cli/command_support.h"
#include "libfarm/client/build_client.h"

namespace farm::cli {

void AddBuildCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("build", "show one build: shards, wheel, verification, failures");
  auto id = std::make_shared<std::string>();
  cmd->add_option("ID", *id, "build id (see 'farmctl builds')")->required();
  cmd->callback([&ctx, id] {
    auto client = BuildClient::Connect(ChoiceOf(ctx.global));
    if (!client.ok()) {
      ctx.exit_code = Fail(client.status());
      return;
    }
    auto build = (*client)->GetBuild(*id);
    if (!build.ok()) {
      ctx.exit_code = Fail(build.status());
      return;
    }
    if (ctx.global.json) {
      PrintJson(ProtoToJson(*build));
    } else {
      std::cout << BuildReport(*build, absl::Now());
    }
  });
}

}  // namespace farm::cli
