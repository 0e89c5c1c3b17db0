// farmctl's view of farm.v1.FarmService: token attached, deadlines set, errors made
// readable. The stub is injected so commands can be tested without a coordinator.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "farm/v1/farm_service.grpc.pb.h"
#include "libfarm/client/coordinator_call.h"
#include "libfarm/rpc/channel.h"

namespace farm {

class FarmClient {
 public:
  FarmClient(std::unique_ptr<farm::v1::FarmService::StubInterface> stub, std::string address,
             std::string token, absl::Duration timeout = absl::Seconds(10));

  // Dials `address` over a real channel.
  static std::unique_ptr<FarmClient> Connect(const std::string& address, const std::string& token,
                                             const ChannelOptions& channel = {});

  absl::StatusOr<farm::v1::GetStatusResponse> GetStatus();
  absl::StatusOr<farm::v1::ListWorkersResponse> ListWorkers();

 private:
  std::unique_ptr<farm::v1::FarmService::StubInterface> stub_;
  CoordinatorCall call_;
};

}  // namespace farm
