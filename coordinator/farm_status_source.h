// What the farm looks like now (coordinator status, workers), for readers other than the
// gRPC API (the dashboard's JSON API), so they need not hold a gRPC service.
#pragma once

#include "farm/v1/farm_service.pb.h"

namespace farm::coordinator {

class FarmStatusSource {
 public:
  virtual ~FarmStatusSource() = default;
  virtual farm::v1::GetStatusResponse Status() const = 0;
  virtual farm::v1::ListWorkersResponse Workers() const = 0;
};

}  // namespace farm::coordinator
