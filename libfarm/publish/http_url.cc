#include "libfarm/publish/http_url.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace farm {
namespace {

absl::Status BadUrl(const std::string& url, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("invalid repository URL \"", url, "\": ", why,
                                                 " (example: https://pypi.example.com/legacy/)"));
}

}  // namespace

std::string HttpUrl::Origin() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return absl::StrCat(scheme, "://", ipv6 ? "[" : "", host, ipv6 ? "]" : "", ":", port);
}

absl::StatusOr<HttpUrl> ParseHttpUrl(const std::string& url) {
  HttpUrl out;
  absl::string_view rest = url;
  if (absl::ConsumePrefix(&rest, "http://")) {
    out.scheme = "http";
    out.port = 80;
  } else if (absl::ConsumePrefix(&rest, "https://")) {
    out.scheme = "https";
    out.port = 443;
  } else {
    return BadUrl(url, "only http:// and https:// are supported");
  }
  const size_t slash = rest.find('/');
  absl::string_view authority = rest.substr(0, slash);
  out.path = slash == absl::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (absl::StrContains(authority, '@')) {
    return BadUrl(url,
                  "credentials in the URL are refused; pass --username and the password through "
                  "the environment (--password-env)");
  }
  absl::string_view port_text;
  if (absl::ConsumePrefix(&authority, "[")) {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) return BadUrl(url, "unterminated [IPv6] host");
    out.host = std::string(authority.substr(0, close));
    absl::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (!absl::ConsumePrefix(&after, ":")) return BadUrl(url, "junk after the [IPv6] host");
      port_text = after;
    }
  } else {
    const size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != absl::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (out.host.empty()) return BadUrl(url, "no host");
  if (!port_text.empty()) {
    int port = 0;
    if (!absl::SimpleAtoi(port_text, &port) || port < 1 || port > 65535) {
      return BadUrl(url, absl::StrCat("port \"", port_text, "\" is not 1-65535"));
    }
    out.port = port;
  }
  if (absl::StrContains(out.path, '#')) return BadUrl(url, "a fragment (#...) has no meaning here");
  return out;
}

}  // namespace farm
