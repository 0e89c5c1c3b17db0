#include "libfarm/client/farm_client.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/grpc_status.h"

namespace farm {

FarmClient::FarmClient(std::unique_ptr<farm::v1::FarmService::StubInterface> stub,
                       std::string address, std::string token, absl::Duration timeout)
    : stub_(std::move(stub)), call_(std::move(address), std::move(token), timeout) {}

std::unique_ptr<FarmClient> FarmClient::Connect(const std::string& address,
                                                const std::string& token,
                                                const ChannelOptions& channel) {
  return std::make_unique<FarmClient>(
      farm::v1::FarmService::NewStub(DialCoordinator(address, channel)), address, token);
}

absl::StatusOr<farm::v1::GetStatusResponse> FarmClient::GetStatus() {
  grpc::ClientContext ctx;
  call_.Prepare(ctx);
  farm::v1::GetStatusResponse resp;
  grpc::Status s = stub_->GetStatus(&ctx, farm::v1::GetStatusRequest(), &resp);
  if (!s.ok()) return call_.Explain(s);
  return resp;
}

absl::StatusOr<farm::v1::ListWorkersResponse> FarmClient::ListWorkers() {
  grpc::ClientContext ctx;
  call_.Prepare(ctx);
  farm::v1::ListWorkersResponse resp;
  grpc::Status s = stub_->ListWorkers(&ctx, farm::v1::ListWorkersRequest(), &resp);
  if (!s.ok()) return call_.Explain(s);
  return resp;
}

}  // namespace farm
