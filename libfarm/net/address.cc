#include "libfarm/net/address.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace farm {

absl::StatusOr<HostPort> ParseHostPort(const std::string& address) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("invalid address '", address, "': ", why,
                                                   ". Expected HOST:PORT, e.g. 127.0.0.1:7420"));
  };
  HostPort hp;
  std::string port_text;
  if (absl::StartsWith(address, "[")) {
    auto close = address.find(']');
    if (close == std::string::npos) return bad("unterminated '['");
    hp.host = address.substr(1, close - 1);
    if (close + 1 >= address.size() || address[close + 1] != ':') return bad("missing port");
    port_text = address.substr(close + 2);
  } else {
    auto colon = address.rfind(':');
    if (colon == std::string::npos) return bad("missing port");
    hp.host = address.substr(0, colon);
    if (absl::StrContains(hp.host, ":")) return bad("IPv6 hosts go in brackets");
    port_text = address.substr(colon + 1);
  }
  if (hp.host.empty()) return bad("missing host");
  if (!absl::SimpleAtoi(port_text, &hp.port) || hp.port < 0 || hp.port > 65535) {
    return bad("port must be a number from 0 to 65535");
  }
  return hp;
}

std::string FormatHostPort(const HostPort& hp) {
  if (absl::StrContains(hp.host, ":")) return absl::StrCat("[", hp.host, "]:", hp.port);
  return absl::StrCat(hp.host, ":", hp.port);
}

bool IsUnixSocketAddress(const std::string& address) {
  return absl::StartsWith(address, "unix:/") && address.size() > 6;
}

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

}  // namespace farm
