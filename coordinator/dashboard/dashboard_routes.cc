#include "coordinator/dashboard/dashboard_routes.h"

#include <httplib.h>

#include <string>

#include "coordinator/dashboard/embedded_assets.h"

namespace farm::coordinator {
namespace {

const EmbeddedAsset* FindAsset(const std::string& name) {
  for (const auto& a : DashboardAssets()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

void Serve(httplib::Response& res, const EmbeddedAsset& asset) {
  // The page loads only its own script and style: no inline code, nothing from elsewhere.
  res.set_header("Content-Security-Policy",
                 "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-cache");
  res.set_content(std::string(asset.data), std::string(asset.content_type));
}

}  // namespace

void DashboardRoutes::RegisterRoutes(httplib::Server& server, bool) {
  // The static files hold no farm data, so they need no token; the data comes from the
  // JSON API, which checks the reader.
  auto page = [](const httplib::Request&, httplib::Response& res) {
    if (const EmbeddedAsset* index = FindAsset("index.html")) Serve(res, *index);
  };
  server.Get("/", page);
  server.Get(R"(/builds/([^/]+))", page);
  server.Get(R"(/assets/([A-Za-z0-9_.-]+))",
             [](const httplib::Request& req, httplib::Response& res) {
               const EmbeddedAsset* asset = FindAsset(req.matches[1]);
               if (asset == nullptr || req.matches[1] == "index.html") {
                 res.status = 404;
                 res.set_content("no such asset\n", "text/plain");
                 return;
               }
               Serve(res, *asset);
             });
}

}  // namespace farm::coordinator
