// The coordinator's HTTP side: /healthz and /metrics now; dashboard, JSON API and the
// package index later. It serves on its own thread.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "libfarm/metrics/registry.h"

namespace httplib {
class Server;
}

namespace farm::coordinator {

class HttpServer {
 public:
  // Binds `address` (host:port, port 0 picks one) and starts serving.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const std::string& address,
                                                           MetricsRegistry* metrics);
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
