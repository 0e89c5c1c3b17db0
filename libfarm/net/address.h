// host:port listen and dial addresses.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace farm {

struct HostPort {
  std::string host;  // without brackets for IPv6
  int port = 0;
};

// Parses "127.0.0.1:7420", "[::1]:7420", "localhost:0". Errors say what a valid address is.
absl::StatusOr<HostPort> ParseHostPort(const std::string& address);

// Formats back to host:port, bracketing IPv6 hosts.
std::string FormatHostPort(const HostPort& hp);

// True for "unix:/absolute/path", gRPC's name for a Unix socket a client dials (a build
// without network reaches the coordinator through one; worker/coordinator_relay.h).
bool IsUnixSocketAddress(const std::string& address);

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

}  // namespace farm
