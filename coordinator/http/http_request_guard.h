// The checks every HTTP request passes once its headers are in and before its body is
// read or a route runs (GuardedHttpServer calls them): the Host allow-list on loopback
// listeners, who may send a body to the route (BodyLimit::admit) and its size. Pure
// functions, so the rules are tested without sockets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/http/http_limits.h"

namespace httplib {
struct Request;
}

namespace farm::coordinator {

class RequestGuard {
 public:
  RequestGuard(bool loopback, std::vector<std::string> allowed_hosts,
               std::vector<BodyLimit> body_limits);

  // The refusal for `request`, or nullopt when it may proceed.
  std::optional<RequestRefusal> Check(const httplib::Request& request) const;

  // The most body bytes `request`'s route reads (0 for every route but the declared ones).
  uint64_t BodyLimitFor(const httplib::Request& request) const;

 private:
  std::optional<RequestRefusal> CheckHost(const httplib::Request& request) const;
  // The body-reading route `request` is for, or null.
  const BodyLimit* RouteOf(const httplib::Request& request) const;

  bool loopback_;
  std::vector<std::string> allowed_hosts_;  // lowercased names without port
  std::vector<BodyLimit> body_limits_;
};

// The name part of a Host header value, lowercased: "LocalHost:8080" -> "localhost",
// "[::1]:80" -> "[::1]"; nullopt for a malformed value.
std::optional<std::string> HostName(const std::string& host_header);

}  // namespace farm::coordinator
