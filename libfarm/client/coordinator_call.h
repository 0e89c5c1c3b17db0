// How farmctl's clients call the coordinator: the token attached, a deadline set, and an
// unreachable coordinator explained with its fix, the same way for every service.
#pragma once

#include <string>

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace farm {

class CoordinatorCall {
 public:
  CoordinatorCall(std::string address, std::string token, absl::Duration timeout)
      : address_(std::move(address)), token_(std::move(token)), timeout_(timeout) {}

  // Attaches the token and a deadline of the call timeout, or `at_least` if longer.
  void Prepare(grpc::ClientContext& ctx, absl::Duration at_least = absl::ZeroDuration()) const;
  absl::Status Explain(const grpc::Status& status) const;

 private:
  std::string address_;
  std::string token_;
  absl::Duration timeout_;
};

// UNAVAILABLE / DEADLINE_EXCEEDED from talking to the coordinator at `address`, with the fix
// appended; any other status as it is.
absl::Status ExplainUnreachable(const absl::Status& status, const std::string& address);

}  // namespace farm
