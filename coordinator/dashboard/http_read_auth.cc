#include "coordinator/dashboard/http_read_auth.h"

#include <httplib.h>

#include "absl/strings/match.h"

namespace farm::coordinator {

absl::Status HttpReadAuth::Check(const httplib::Request& request) const {
  if (request.has_param("token")) {
    return absl::InvalidArgumentError(
        "a token in the URL is refused: query strings end up in access logs and browser "
        "history. Fix: send 'Authorization: Bearer TOKEN', or open the dashboard as "
        "/#token=TOKEN (the page sends it as a header) or sign in on the page");
  }
  std::string presented;
  const std::string header = request.get_header_value("Authorization");
  if (absl::StartsWith(header, "Bearer ")) presented = header.substr(7);
  if (presented.empty()) {
    if (loopback_) return absl::OkStatus();
    return absl::UnauthenticatedError(
        "this coordinator serves HTTP beyond loopback, so reading needs the farm token. Fix: "
        "send 'Authorization: Bearer TOKEN', or sign in on the dashboard page");
  }
  return auth_->AuthorizeToken(presented, "HTTP.Read").status();
}

}  // namespace farm::coordinator
