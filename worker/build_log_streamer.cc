#include "worker/build_log_streamer.h"

#include <fstream>

#include "libfarm/logging/logger.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/retry.h"
#include "libfarm/rpc/token_auth.h"

namespace farm::worker {
namespace {

constexpr uint64_t kMaxChunk = 1 << 20;  // AppendBuildLog's limit per call

}  // namespace

BuildLogStreamer::BuildLogStreamer(farm::v1::BuildService::StubInterface* stub, std::string token,
                                   std::string build_id, absl::Duration interval)
    : stub_(stub), token_(std::move(token)), build_id_(std::move(build_id)), interval_(interval) {}

BuildLogStreamer::~BuildLogStreamer() { Stop(); }

void BuildLogStreamer::Start(const std::string& stdout_path) {
  path_ = stdout_path;
  thread_ = std::thread([this] { Loop(); });
}

void BuildLogStreamer::Stop() {
  if (!thread_.joinable()) return;
  stop_.Notify();
  thread_.join();
}

// Best effort, like the live log: Send logs a failure.
void BuildLogStreamer::Note(const std::string& text) { Send(text).IgnoreError(); }

void BuildLogStreamer::Loop() {
  // Each tick sends what is new; a failed one is simply tried again at the next tick.
  while (!stop_.WaitForNotificationWithTimeout(interval_)) SendNew().IgnoreError();
  // The command has exited: its file is complete. A few tries for a coordinator blip.
  // Each failure was logged by Send; the unsent tail reaches the coordinator as stdout anyway.
  Retry({.max_attempts = 3,
         .initial_backoff = absl::Seconds(1),
         .max_backoff = absl::Seconds(1),
         .patience = Patience::kDaemon},
        [this] { return SendNew(); })
      .IgnoreError();
}

absl::Status BuildLogStreamer::SendNew() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return absl::OkStatus();  // not created yet
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk(kMaxChunk, '\0');
  while (true) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0) return absl::OkStatus();
    if (absl::Status s = Send(chunk.substr(0, got)); !s.ok()) return s;
    offset_ += got;
    if (got < chunk.size()) return absl::OkStatus();
  }
}

absl::Status BuildLogStreamer::Send(const std::string& data) {
  farm::v1::AppendBuildLogRequest request;
  request.set_build_id(build_id_);
  request.set_data(data);
  farm::v1::AppendBuildLogResponse response;
  grpc::ClientContext ctx;
  AttachToken(ctx, token_);
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  absl::Status status = FromGrpcStatus(stub_->AppendBuildLog(&ctx, request, &response));
  if (!status.ok()) {
    ComponentLogger("worker")->warn("build {}: log upload failed ({}); will retry", build_id_,
                                    status.message());
  }
  return status;
}

}  // namespace farm::worker
