#include "cli/farm_client.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/token_auth.h"
#include "libfarm/status/grpc_status.h"

namespace farm::cli {

FarmClient::FarmClient(std::unique_ptr<farm::v1::FarmService::StubInterface> stub,
                       std::string address, std::string token, absl::Duration timeout)
    : stub_(std::move(stub)),
      address_(std::move(address)),
      token_(std::move(token)),
      timeout_(timeout) {}

std::unique_ptr<FarmClient> FarmClient::Connect(const std::string& address,
                                                const std::string& token) {
  return std::make_unique<FarmClient>(farm::v1::FarmService::NewStub(DialCoordinator(address)),
                                      address, token);
}

void FarmClient::Prepare(grpc::ClientContext& ctx) const {
  AttachToken(ctx, token_);
  ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout_));
}

absl::Status FarmClient::Explain(const grpc::Status& status) const {
  absl::Status s = FromGrpcStatus(status);
  if (s.code() == absl::StatusCode::kUnavailable ||
      s.code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::Status(
        s.code(), absl::StrCat("cannot reach the coordinator at ", address_, " (", s.message(),
                               "). Fix: start one ('farmctl up' for a local "
                               "farm) or point --coordinator / FARM_COORDINATOR at it"));
  }
  return s;
}

absl::StatusOr<farm::v1::GetStatusResponse> FarmClient::GetStatus() {
  grpc::ClientContext ctx;
  Prepare(ctx);
  farm::v1::GetStatusResponse resp;
  grpc::Status s = stub_->GetStatus(&ctx, farm::v1::GetStatusRequest(), &resp);
  if (!s.ok()) return Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::ListWorkersResponse> FarmClient::ListWorkers() {
  grpc::ClientContext ctx;
  Prepare(ctx);
  farm::v1::ListWorkersResponse resp;
  grpc::Status s = stub_->ListWorkers(&ctx, farm::v1::ListWorkersRequest(), &resp);
  if (!s.ok()) return Explain(s);
  return resp;
}

}  // namespace farm::cli
