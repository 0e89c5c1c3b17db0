// What one client may make the coordinator's HTTP port do: how large a request may be,
// how long it may take to arrive, how many connections it may hold, and (on loopback)
// which Host names it may use. Enforced by GuardedHttpServer (guarded_http_server.h)
// before any route runs; a route that takes a large body (an upload) declares it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace farm::coordinator {

// A route that reads a request body, and the most it may read. Every other route reads
// none, so a body sent to it is refused with 413 before a byte of it is read.
struct BodyLimit {
  std::string method;  // "POST"
  std::string path;    // exact request path, "/legacy/"
  uint64_t max_bytes = 0;
};

struct HttpLimits {
  // The request line and headers: all of them within this time and size, however slowly
  // they drip in (a per-read timeout alone lets one byte a second hold a thread forever).
  absl::Duration head_timeout = absl::Seconds(10);
  uint64_t max_head_bytes = 32 << 10;
  // Longest wait for the next bytes of a body, or for a client to take response bytes.
  absl::Duration io_timeout = absl::Seconds(30);
  // An idle keep-alive connection is closed after this long.
  absl::Duration keep_alive_timeout = absl::Seconds(5);
  // Open connections, overall and per client address; more are answered 503 at once.
  int max_connections = 64;
  int max_connections_per_client = 16;
  // Host names a loopback listener answers besides 127.0.0.1, localhost and [::1]
  // (farm-coordinator --http-allow-host). A browser page from any other name is a DNS
  // rebinding attempt: refused with 421.
  std::vector<std::string> allowed_hosts;
};

}  // namespace farm::coordinator
