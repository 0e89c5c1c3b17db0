// The JSON API under /api/v1/: the same answers as the gRPC FarmService and BuildService,
// in the protobuf JSON mapping (proto field names, default values printed). Read-only.
//
//   GET /api/v1/status                      farm.v1.GetStatusResponse
//   GET /api/v1/workers                     farm.v1.ListWorkersResponse
//   GET /api/v1/actions?state=RUNNING       farm.v1.ListActionsResponse (every build)
//   GET /api/v1/builds?limit=N              farm.v1.ListBuildsResponse
//   GET /api/v1/builds/ID                   farm.v1.Build
//   GET /api/v1/builds/ID/actions?state=&limit=   farm.v1.ListActionsResponse
//   GET /api/v1/builds/ID/logs?offset=&max_bytes= farm.v1.GetBuildLogsResponse
//
// Errors answer {"error": message, "code": "NOT_FOUND"} with a matching HTTP status.
#pragma once

#include <string>

#include <google/protobuf/util/json_util.h>

#include "coordinator/builds/build_registry.h"
#include "coordinator/farm_status_source.h"
#include "coordinator/http/http_server.h"
#include "libfarm/rpc/token_auth.h"

namespace farm::coordinator {

// The JSON mapping the API uses; clients comparing with gRPC answers use the same.
google::protobuf::util::JsonPrintOptions ApiJsonOptions();

class ApiRoutes final : public HttpRoutes {
 public:
  ApiRoutes(const FarmStatusSource* farm, const BuildRegistry* builds, const TokenVerifier* auth);
  void RegisterRoutes(httplib::Server& server, bool loopback) override;

 private:
  const FarmStatusSource* farm_;
  const BuildRegistry* builds_;
  const TokenVerifier* auth_;
};

}  // namespace farm::coordinator
