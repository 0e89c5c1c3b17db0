// The coordinator's HTTP side: /healthz and /metrics, plus the routes components add
// (dashboard, JSON API, package index). It serves on its own thread.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/http/http_limits.h"
#include "libfarm/metrics/registry.h"

namespace httplib {
class Server;
}

namespace farm::coordinator {

// A component that serves under the coordinator's HTTP port. Routes are registered once,
// before the server listens (httplib's route tables are not safe to change while serving).
class HttpRoutes {
 public:
  virtual ~HttpRoutes() = default;
  // `loopback`: the server listens on loopback only, so it may relax read authentication.
  virtual void RegisterRoutes(httplib::Server& server, bool loopback) = 0;
  // The routes that read a request body, and how much; every other route reads none.
  virtual std::vector<BodyLimit> BodyLimits() const { return {}; }
};

// HTTPS with the coordinator's own certificate (--tls-cert, --tls-key); empty: plain HTTP.
// No client certificates here: browsers and pip read with the token, as over plain HTTP.
struct HttpTlsFiles {
  std::string cert_file;
  std::string key_file;
  bool enabled() const { return !cert_file.empty(); }
};

class HttpServer {
 public:
  // Binds `address` (host:port, port 0 picks one), registers `routes`, and starts serving
  // within `limits`.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& address, MetricsRegistry* metrics,
      const std::vector<HttpRoutes*>& routes = {}, const HttpLimits& limits = {},
      const HttpTlsFiles& tls = {});
  ~HttpServer();

  // The bound address, with the real port.
  const std::string& address() const { return address_; }
  void Stop();

 private:
  HttpServer() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string address_;
};

}  // namespace farm::coordinator
