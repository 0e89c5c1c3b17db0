// farmctl watch ID: live progress of a build per arch shard until it finishes. On a terminal
// it redraws one frame in place; otherwise (a log, CI) it prints a line whenever progress
// changes. Exits 0 when the build succeeded, 1 when it failed or was cancelled.
#include <unistd.h>

#include <iostream>
#include <thread>

#include "absl/strings/str_split.h"
#include "cli/build_client.h"
#include "cli/build_view.h"
#include "cli/command_support.h"
#include "libfarm/status/exit_code.h"

namespace farm::cli {
namespace {

int LineCount(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

void AddWatchCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("watch", "follow a build's progress per arch until it finishes");
  auto id = std::make_shared<std::string>();
  auto interval = std::make_shared<double>(1.0);
  cmd->add_option("ID", *id, "build id (see 'farmctl builds')")->required();
  cmd->add_option("--interval", *interval, "seconds between updates")->capture_default_str();
  cmd->callback([&ctx, id, interval] {
    auto client = BuildClient::Connect(ctx.global);
    if (!client.ok()) {
      ctx.exit_code = Fail(client.status());
      return;
    }
    const bool tty = !ctx.global.json && isatty(STDOUT_FILENO) == 1;
    int drawn_lines = 0;
    std::string last;
    while (true) {
      auto build = (*client)->GetBuild(*id);
      if (!build.ok()) {
        ctx.exit_code = Fail(build.status());
        return;
      }
      if (ctx.global.json) {
        const std::string line = ProtoToJson(*build).dump();
        if (line != last) std::cout << line << std::endl;
        last = line;
      } else if (tty) {
        const std::string frame = WatchFrame(*build, absl::Now());
        // Up to the first line of the previous frame, then clear to the end of the screen.
        if (drawn_lines > 0) std::cout << "\x1b[" << drawn_lines << "F\x1b[J";
        std::cout << frame << std::flush;
        drawn_lines = LineCount(frame);
      } else {
        const std::string line = WatchLine(*build);
        if (line != last) std::cout << line << std::endl;
        last = line;
      }
      if (BuildIsTerminal(build->state())) {
        ctx.exit_code = build->state() == farm::v1::BUILD_STATE_SUCCEEDED ? kExitOk : kExitFailure;
        if (ctx.exit_code != kExitOk && !ctx.global.json) {
          std::cerr << "farmctl: build " << *id << " " << BuildStateText(build->state())
                    << ". See 'farmctl build " << *id << "' for the failing action's output\n";
        }
        return;
      }
      std::this_thread::sleep_for(
          std::chrono::milliseconds(static_cast<int64_t>(std::max(0.1, *interval) * 1000)));
    }
  });
}

}  // namespace farm::cli
