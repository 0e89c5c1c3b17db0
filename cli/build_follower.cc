#include "cli/build_follower.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "cli/build_view.h"
#include "libfarm/rpc/retry.h"

namespace farm::cli {
namespace {

int LineCount(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

absl::Status RideOutCoordinatorRestart(const std::function<absl::Status()>& call, bool* waited) {
  bool lost = false;
  RetryOptions retry;
  retry.deadline = absl::Now() + kCoordinatorRestartPatience;
  retry.max_backoff = absl::Seconds(5);
  retry.on_retry = [&](const RetryEvent& e) {
    if (lost) return;
    lost = true;
    // What failed, without the fix for a coordinator never reached: this one was.
    const std::string why(e.failure.message());
    std::cerr << "farmctl: lost the coordinator (" << why.substr(0, why.find(". Fix:"))
              << "); the build goes on there. Waiting up to "
              << absl::FormatDuration(kCoordinatorRestartPatience) << " for it to come back"
              << std::endl;
  };
  absl::Status s = Retry(retry, call);
  if (waited != nullptr) *waited = lost;
  if (s.ok() && lost) std::cerr << "farmctl: the coordinator is back" << std::endl;
  return s;
}

absl::StatusOr<farm::v1::Build> FollowBuild(BuildClient& client, const std::string& id,
                                            const GlobalOptions& global, double interval_seconds) {
  const bool tty = !global.json && isatty(STDOUT_FILENO) == 1;
  int drawn_lines = 0;
  std::string last;
  bool answered = false;
  while (true) {
    // Until the coordinator has answered once, a failure is the caller's to fix (a wrong
    // address or TLS CA is UNAVAILABLE too); after that it may be a restart.
    absl::StatusOr<farm::v1::Build> build;
    auto get = [&] {
      build = client.GetBuild(id);
      return build.status();
    };
    bool waited = false;
    if (absl::Status s = answered ? RideOutCoordinatorRestart(get, &waited) : get(); !s.ok()) {
      return s;
    }
    answered = true;
    if (waited) drawn_lines = 0;  // the next frame goes below the messages, not over them
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
