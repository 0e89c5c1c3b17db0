// farmctl down: stop exactly the processes `farmctl up` started.
#include <filesystem>
#include <iostream>

#include "cli/command_support.h"
#include "cli/local_farm.h"

namespace farm::cli {

void AddDownCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("down", "stop the local farm started by 'farmctl up'");
  static std::string data_dir;
  cmd->add_option("--data-dir", data_dir,
                  "the farm's data dir (default: --farm-dir, else the current local farm)");
  cmd->callback([&ctx] {
    std::string dir = data_dir;
    if (dir.empty()) dir = ctx.global.farm_dir;
    if (dir.empty()) dir = CurrentLocalFarmDir().value_or(DefaultLocalFarmDir());
    dir = std::filesystem::absolute(dir).lexically_normal().string();
    auto stopped = StopLocalFarm(dir);
    if (!stopped.ok() && stopped.status().code() != absl::StatusCode::kNotFound) {
      ctx.exit_code = Fail(stopped.status());
      return;
    }
    const int count = stopped.ok() ? *stopped : 0;
    if (ctx.global.json) {
      PrintJson({{"data_dir", dir}, {"stopped", count}});
    } else if (!stopped.ok()) {
      std::cout << "no local farm is running in " << dir << "\n";
    } else {
      std::cout << "stopped " << count << " process(es) of the local farm in " << dir
                << "; its state stays in place for the next 'farmctl up'\n";
    }
  });
}

}  // namespace farm::cli
