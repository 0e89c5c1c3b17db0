// Who may read the dashboard's JSON API. Every endpoint here only reads, but build logs and
// worker addresses are still not for everyone: on a non-loopback listener every request
// must carry a farm token whose role may read ("HTTP.Read" in libfarm/auth/method_access.h)
// as `Authorization: Bearer T` (the dashboard page asks for it and sends it so). On loopback
// the token is optional, since the dashboard is meant to be opened locally or through an SSH
// tunnel; a token that is sent must still be known and allowed.
//
// A token in the URL (`?token=T`) is refused, right or wrong: query strings are written to
// proxies' access logs and browser history, so the token must not be taught to go there.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "libfarm/rpc/token_auth.h"

namespace httplib {
struct Request;
}

namespace farm::coordinator {

class HttpReadAuth {
 public:
  HttpReadAuth(const TokenVerifier* auth, bool loopback) : auth_(auth), loopback_(loopback) {}

  // UNAUTHENTICATED, with the fix, when the request may not read.
  absl::Status Check(const httplib::Request& request) const;

 private:
  const TokenVerifier* auth_;
  bool loopback_;
};

}  // namespace farm::coordinator
