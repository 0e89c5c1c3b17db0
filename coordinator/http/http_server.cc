#include "coordinator/http/http_server.h"

#include <sys/socket.h>

#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "coordinator/http/guarded_http_server.h"
#include "libfarm/logging/logger.h"
#include "libfarm/net/address.h"

namespace farm::coordinator {

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& address, MetricsRegistry* metrics, const std::vector<HttpRoutes*>& routes,
    const HttpLimits& limits, const HttpTlsFiles& tls) {
  auto hp = ParseHostPort(address);
  if (!hp.ok()) return hp.status();
  std::unique_ptr<HttpServer> http(new HttpServer());
  std::unique_ptr<HttpsContext> https;
  if (tls.enabled()) {
    auto context = HttpsContext::FromFiles(tls.cert_file, tls.key_file);
    if (!context.ok()) return context.status();
    https = *std::move(context);
  }
  // Request size, time, connection and Host limits: guarded_http_server.h.
  std::vector<BodyLimit> body_limits;
  for (HttpRoutes* r : routes) {
    for (BodyLimit& b : r->BodyLimits()) body_limits.push_back(std::move(b));
  }
  http->server_ = std::make_unique<GuardedHttpServer>(limits, IsLoopbackHost(hp->host),
                                                      std::move(body_limits), std::move(https));
  auto& server = *http->server_;
  // Only SO_REUSEADDR: httplib's default also sets SO_REUSEPORT, which would let a second
  // coordinator silently share the port.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server.Get("/metrics", [metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics->Render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  for (HttpRoutes* r : routes) r->RegisterRoutes(server, IsLoopbackHost(hp->host));

  int port = hp->port;
  if (port == 0) {
    port = server.bind_to_any_port(hp->host);
    if (port < 0) port = 0;
  } else if (!server.bind_to_port(hp->host, port)) {
    port = 0;
  }
  if (port == 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for HTTP on ", address,
        ": the port is in use or the address is not local. Fix: choose another --http-listen, "
        "or pass --http-listen '' to disable HTTP"));
  }
  http->address_ = FormatHostPort({hp->host, port});
  http->thread_ = std::thread([&server] { server.listen_after_bind(); });
  return http;
}

void HttpServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

HttpServer::~HttpServer() { Stop(); }

}  // namespace farm::coordinator
