#include "worker/build_log_streamer.h"

#include <fstream>

#include "libfarm/logging/logger.h"
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

void BuildLogStreamer::Note(const std::string& text) { Send(text); }

void BuildLogStreamer::Loop() {
  while (!stop_.WaitForNotificationWithTimeout(interval_)) SendNew();
  // The command has exited: its file is complete. A few tries for a coordinator blip.
  for (int attempt = 0; attempt < 3 && !SendNew(); ++attempt) {
    absl::SleepFor(absl::Seconds(1));
  }
}

bool BuildLogStreamer::SendNew() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return true;  // not created yet
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk(kMaxChunk, '\0');
  while (true) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0) return true;
    if (!Send(chunk.substr(0, got))) return false;
    offset_ += got;
    if (got < chunk.size()) return true;
  }
}

bool BuildLogStreamer::Send(const std::string& data) {
  farm::v1::AppendBuildLogRequest request;
  request.set_build_id(build_id_);
  request.set_data(data);
  farm::v1::AppendBuildLogResponse response;
  grpc::ClientContext ctx;
  AttachToken(ctx, token_);
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status status = stub_->AppendBuildLog(&ctx, request, &response);
  if (!status.ok()) {
    ComponentLogger("worker")->warn("build {}: log upload failed ({}); will retry", build_id_,
                                    status.error_message());
    return false;
  }
  return true;
}

}  // namespace farm::worker
