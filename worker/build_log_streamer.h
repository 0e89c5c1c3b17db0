// Streams a wheel build's output to the coordinator's build log (BuildService.AppendBuildLog)
// while the command runs, so `farmctl logs --follow` and the dashboard see it live.
#pragma once

#include <cstdint>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "farm/v1/builds.grpc.pb.h"
#include "worker/action_runner.h"

namespace farm::worker {

class BuildLogStreamer final : public OutputFollower {
 public:
  // The stub is injected so the streamer can be tested without a coordinator.
  BuildLogStreamer(farm::v1::BuildService::StubInterface* stub, std::string token,
                   std::string build_id, absl::Duration interval = absl::Milliseconds(300));
  ~BuildLogStreamer() override;

  void Start(const std::string& stdout_path) override;
  // Sends what is left. A coordinator that stays unreachable loses the unsent tail of the
  // live log only: the full output still reaches it as the action's stdout blob.
  void Stop() override;

  // Appends the worker's own `text` (what it runs, why it failed) to the build log.
  void Note(const std::string& text);

 private:
  void Loop();
  // Sends the file's bytes from offset_ on; the failure when the coordinator refused or is away.
  absl::Status SendNew();
  absl::Status Send(const std::string& data);

  farm::v1::BuildService::StubInterface* const stub_;
  const std::string token_;
  const std::string build_id_;
  const absl::Duration interval_;
  std::string path_;
  uint64_t offset_ = 0;  // bytes of the file already sent; only the loop thread touches it
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace farm::worker
