// What one client may make the coordinator's HTTP port do: how large a request may be,
// how long it may take to arrive, how many connections it may hold, and (on loopback)
// which Host names it may use. Enforced by GuardedHttpServer (guarded_http_server.h)
// before any route runs; a route that takes a large body (an upload) declares it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace httplib {
struct Request;
}

namespace farm::coordinator {

// Why a request is answered without running its route: the status and plain-text answer
// (with the fix), and any header the answer needs (WWW-Authenticate for a 401).
struct RequestRefusal {
  int status = 400;
  std::string message;
  std::vector<std::pair<std::string, std::string>> headers;
};

// A route that reads a request body, and the most it may read. Every other route reads
// none, so a body sent to it is refused with 413 before a byte of it is read.
struct BodyLimit {
  std::string method;  // "POST"
  std::string path;    // exact request path, "/legacy/"
  uint64_t max_bytes = 0;
  // Who may send it, asked from the headers before a byte of the body is read: the refusal
  // (401), or nullopt. Unset: anyone. A refused body is never read, and its connection is
  // closed, so a client without credentials costs its headers only.
  std::function<std::optional<RequestRefusal>(const httplib::Request&)> admit;
};

struct HttpLimits {
  // The request line and headers: all of them within this time and size, however slowly
  // they drip in (a per-read timeout alone lets one byte a second hold a thread forever).
  absl::Duration head_timeout = absl::Seconds(10);
  uint64_t max_head_bytes = 32 << 10;
  // Longest wait for the next bytes of a body, or for a client to take response bytes.
  absl::Duration io_timeout = absl::Seconds(30);
  // A request body must arrive at `body_min_rate` on average once `body_grace` has passed:
  // its deadline is body_grace + bytes so far / body_min_rate, so at most
  // body_grace + Content-Length / body_min_rate (a 1 KiB form 10 s, a 100 MiB wheel 26 min,
  // a 2 GiB one 9 h), and one byte a second is cut off (408) after 10 s instead of holding
  // a connection for days. 64 KiB/s is slower than any link one would upload a wheel over;
  // the grace is the head's time, for TCP and TLS to get going.
  absl::Duration body_grace = absl::Seconds(10);
  uint64_t body_min_rate = 64 << 10;  // bytes per second
  // An idle keep-alive connection is closed after this long.
  absl::Duration keep_alive_timeout = absl::Seconds(5);
  // Open connections, overall and per client address; more are answered 503 at once.
  // Every loopback client has the same address, so on a loopback listener the per-client
  // bound is shared by every local user and process.
  int max_connections = 64;
  int max_connections_per_client = 16;
  // Of those, the ones that wait on their client: a request head still arriving after
  // `prompt_time`, a request body, a keep-alive idle for longer than `prompt_time`. At most
  // half of a client's connections and three quarters of all may wait; the rest stay free
  // for requests that arrive at once (/healthz, /metrics, a page of the index), so slow
  // clients cannot hold every slot. A connection that would wait beyond that is cut off
  // (408; an idle keep-alive is closed), an upload answered 503 before its body.
  absl::Duration prompt_time = absl::Seconds(1);
  int MaxWaiting() const { return std::max(1, max_connections - max_connections / 4); }
  int MaxWaitingPerClient() const { return std::max(1, max_connections_per_client / 2); }
  // Host names a loopback listener answers besides 127.0.0.1, localhost and [::1]
  // (farm-coordinator --http-allow-host). A browser page from any other name is a DNS
  // rebinding attempt: refused with 421.
  std::vector<std::string> allowed_hosts;
};

}  // namespace farm::coordinator
