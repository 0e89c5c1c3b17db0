// httplib::Server with the coordinator's HTTP limits (http_limits.h) enforced where
// httplib 0.11 (Debian 12's) has no knob for them. Its own socket stream bounds the
// request line and headers in bytes and in total time (httplib reads a line into memory
// until a newline comes, and only times out reads that wait, so a 512 MiB "line" or a
// header dripped a byte a second would go through), holds a body to a minimum rate, counts
// connections per client and overall and keeps some free of slow clients (ConnectionSlots),
// and stops reading a body past what the route allows. Requests are checked by RequestGuard
// (Host on loopback, who may send a body, its size) before their body is read or a route
// runs; a refused body is never read and its connection is closed.
#pragma once

#include <string>
#include <vector>

#include <httplib.h>

#include "coordinator/http/connection_io.h"
#include "coordinator/http/connection_slots.h"
#include "coordinator/http/http_limits.h"
#include "coordinator/http/http_request_guard.h"

namespace farm::coordinator {

class GuardedHttpServer : public httplib::Server {
 public:
  // `loopback`: the listener is on loopback (the Host allow-list applies). `https`: serve
  // TLS with it (connection_io.h), under the same limits; null: plain HTTP.
  GuardedHttpServer(const HttpLimits& limits, bool loopback, std::vector<BodyLimit> body_limits,
                    std::unique_ptr<HttpsContext> https = nullptr);

 private:
  bool process_and_close_socket(socket_t sock) override;

  const HttpLimits limits_;
  const std::unique_ptr<HttpsContext> https_;
  const RequestGuard guard_;
  ConnectionSlots slots_;
};

}  // namespace farm::coordinator
