#include "cli/build_follower.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "cli/build_view.h"

namespace farm::cli {
namespace {

int LineCount(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

absl::StatusOr<farm::v1::Build> FollowBuild(BuildClient& client, const std::string& id,
                                            const GlobalOptions& global, double interval_seconds) {
  const bool tty = !global.json && isatty(STDOUT_FILENO) == 1;
  int drawn_lines = 0;
  std::string last;
  while (true) {
    auto build = client.GetBuild(id);
    if (!build.ok()) return build.status();
    if (global.json) {
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
    if (IsTerminalBuildState(build->state())) return build;
    std::this_thread::sleep_for(
        std::chrono::milliseconds(static_cast<int64_t>(std::max(0.1, interval_seconds) * 1000)));
  }
}

}  // namespace farm::cli
