// Client channels to the coordinator.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/channel.h>

namespace farm {

// Plain-text channel (loopback by default; put TLS in front for other networks) with
// keepalive, so a dead coordinator is noticed while a call is idle.
std::shared_ptr<grpc::Channel> DialCoordinator(const std::string& address);

}  // namespace farm
