#include "coordinator/dashboard/http_read_auth.h"

#include <httplib.h>

#include "absl/strings/match.h"
#include "libfarm/auth/token.h"

namespace farm::coordinator {

absl::Status HttpReadAuth::Check(const httplib::Request& request) const {
  std::string presented;
  const std::string header = request.get_header_value("Authorization");
  if (absl::StartsWith(header, "Bearer ")) {
    presented = header.substr(7);
  } else if (request.has_param("token")) {
    presented = request.get_param_value("token");
  }
  if (presented.empty()) {
    if (loopback_) return absl::OkStatus();
    return absl::UnauthenticatedError(
        "this coordinator serves HTTP beyond loopback, so reading needs the farm token. Fix: "
        "send 'Authorization: Bearer TOKEN', or add ?token=TOKEN to the dashboard's URL");
  }
  if (!TokensEqual(presented, token_)) {
    return absl::UnauthenticatedError(
        "the farm token does not match the coordinator's. Fix: use the coordinator's token file");
  }
  return absl::OkStatus();
}

}  // namespace farm::coordinator
