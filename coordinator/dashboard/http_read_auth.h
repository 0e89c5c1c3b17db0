// Who may read the dashboard's JSON API. Every endpoint here only reads, but build logs and
// worker addresses are still not for everyone: on a non-loopback listener every request
// must carry the farm token (`Authorization: Bearer T`, or `?token=T` for a browser tab).
// On loopback the token is optional, since the dashboard is meant to be opened locally or
// through an SSH tunnel; a token that is sent must still be right.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace httplib {
struct Request;
}

namespace farm::coordinator {

class HttpReadAuth {
 public:
  HttpReadAuth(std::string token, bool loopback) : token_(std::move(token)), loopback_(loopback) {}

  // UNAUTHENTICATED, with the fix, when the request may not read.
  absl::Status Check(const httplib::Request& request) const;

 private:
  std::string token_;
  bool loopback_;
};

}  // namespace farm::coordinator
