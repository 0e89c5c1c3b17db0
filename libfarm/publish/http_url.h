// http:// and https:// repository URLs, split the way cpp-httplib wants them.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace farm {

struct HttpUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // without brackets for IPv6
  int port = 0;        // explicit or the scheme's default
  std::string path;    // starts with '/'; "/" when the URL has none

  // "scheme://host:port", what httplib::Client takes.
  std::string Origin() const;
  std::string ToString() const { return Origin() + path; }
};

// Refuses other schemes, user:password@ in the URL (credentials belong in the environment,
// not in shell history), a missing host and bad ports; errors show a valid example.
absl::StatusOr<HttpUrl> ParseHttpUrl(const std::string& url);

}  // namespace farm
