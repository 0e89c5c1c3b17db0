// The web dashboard: `/` (fleet and builds) and `/builds/ID` (one build) serve the same
// page, whose script draws whichever the path names from the JSON API, every 2 s; the
// page's script and style come from /assets/. Everything is embedded in the binary, so
// the dashboard works with no network beyond the coordinator.
#pragma once

#include "coordinator/http/http_server.h"

namespace farm::coordinator {

class DashboardRoutes final : public HttpRoutes {
 public:
  void RegisterRoutes(httplib::Server& server, bool loopback) override;
};

}  // namespace farm::coordinator
