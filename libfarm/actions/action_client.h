// A client of farm.v1.ActionService: submit actions, wait for them, cancel them. Used by
// farm-nvcc, builds, tests and the scheduler bench.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "farm/v1/actions.grpc.pb.h"
#include "libfarm/rpc/channel.h"

namespace farm {

class ActionClient {
 public:
  ActionClient(std::unique_ptr<farm::v1::ActionService::StubInterface> stub, std::string token);
  static std::unique_ptr<ActionClient> Connect(const std::string& address, const std::string& token,
                                               const ChannelOptions& channel = {});

  // Queues `actions`. A coordinator too busy to take the call on is asked again after a
  // pause, for up to kBusyPatience.
  absl::StatusOr<std::vector<farm::v1::ActionStatus>> Execute(
      const std::vector<farm::v1::Action>& actions);
  static constexpr absl::Duration kBusyPatience = absl::Minutes(10);
  // Waits until every action is terminal or `timeout` passes; returns the latest statuses.
  absl::StatusOr<std::vector<farm::v1::ActionStatus>> WaitAll(const std::vector<std::string>& ids,
                                                              absl::Duration timeout);
  absl::StatusOr<farm::v1::ActionStatus> Get(const std::string& id);
  absl::StatusOr<farm::v1::ActionStatus> Cancel(const std::string& id);
  // The whole-compile cache (farm-nvcc): NOT_FOUND on a miss.
  absl::StatusOr<farm::v1::CompileResult> GetCompileResult(const std::string& key);
  absl::Status PutCompileResult(const std::string& key, const farm::v1::CompileResult& result);
  // The learnt wall seconds under each history key, in order (0: none learnt).
  absl::StatusOr<std::vector<double>> GetExpectedCosts(
      const std::vector<std::string>& history_keys);

 private:
  void Prepare(grpc::ClientContext& ctx, absl::Duration timeout) const;

  std::unique_ptr<farm::v1::ActionService::StubInterface> stub_;
  std::string token_;
};

bool IsTerminalActionState(farm::v1::ActionState state);

}  // namespace farm
