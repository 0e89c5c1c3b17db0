#include "coordinator/http/http_request_guard.h"

#include <httplib.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/units/byte_size.h"

namespace farm::coordinator {
namespace {

// Always answered on loopback: the names that can only mean this machine.
constexpr const char* kLoopbackNames[] = {"127.0.0.1", "localhost", "[::1]"};

bool ValidPort(absl::string_view port) {
  uint32_t n = 0;
  return !port.empty() && port.size() <= 5 && absl::SimpleAtoi(port, &n) && n <= 65535 &&
         std::all_of(port.begin(), port.end(), [](char c) { return absl::ascii_isdigit(c); });
}

}  // namespace

std::optional<std::string> HostName(const std::string& host_header) {
  absl::string_view value = absl::StripAsciiWhitespace(host_header);
  if (value.empty()) return std::nullopt;
  absl::string_view name = value;
  if (value.front() == '[') {
    const size_t close = value.find(']');
    if (close == absl::string_view::npos) return std::nullopt;
    name = value.substr(0, close + 1);
    absl::string_view rest = value.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !ValidPort(rest.substr(1)))) return std::nullopt;
  } else if (const size_t colon = value.find(':'); colon != absl::string_view::npos) {
    name = value.substr(0, colon);
    if (!ValidPort(value.substr(colon + 1))) return std::nullopt;
  }
  if (name.empty()) return std::nullopt;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '-' && c != '_' && c != '[' && c != ']' &&
        c != ':') {
      return std::nullopt;
    }
  }
  return absl::AsciiStrToLower(name);
}

RequestGuard::RequestGuard(bool loopback, std::vector<std::string> allowed_hosts,
                           std::vector<BodyLimit> body_limits)
    : loopback_(loopback), body_limits_(std::move(body_limits)) {
  for (const char* name : kLoopbackNames) allowed_hosts_.push_back(name);
  for (const std::string& name : allowed_hosts) {
    // Given with or without a port: only the name is compared.
    if (auto n = HostName(name)) allowed_hosts_.push_back(*n);
  }
}

const BodyLimit* RequestGuard::RouteOf(const httplib::Request& request) const {
  for (const BodyLimit& b : body_limits_) {
    if (b.method == request.method && b.path == request.path) return &b;
  }
  return nullptr;
}

uint64_t RequestGuard::BodyLimitFor(const httplib::Request& request) const {
  const BodyLimit* route = RouteOf(request);
  return route == nullptr ? 0 : route->max_bytes;
}

std::optional<RequestRefusal> RequestGuard::CheckHost(const httplib::Request& request) const {
  // A loopback listener is only reachable from this machine, but a browser on it runs
  // pages from anywhere: one from a name the attacker re-points at 127.0.0.1 (DNS
  // rebinding) still sends its own name as Host. The port is not compared: an SSH tunnel
  // (ssh -L 9000:127.0.0.1:7421) legitimately sends "localhost:9000".
  if (!loopback_) return std::nullopt;
  if (request.get_header_value_count("Host") != 1) {
    return RequestRefusal{400, "400 a request needs exactly one Host header"};
  }
  const std::string header = request.get_header_value("Host");
  const std::optional<std::string> name = HostName(header);
  if (name &&
      std::find(allowed_hosts_.begin(), allowed_hosts_.end(), *name) != allowed_hosts_.end()) {
    return std::nullopt;
  }
  return RequestRefusal{
      421, absl::StrCat("421 this coordinator listens on loopback and answers only to the "
                        "host names ",
                        absl::StrJoin(allowed_hosts_, ", "), ", not \"",
                        absl::CHexEscape(header.substr(0, 100)),
                        "\". Fix: open it as http://127.0.0.1:PORT/, or allow the name with "
                        "farm-coordinator --http-allow-host NAME")};
}

std::optional<RequestRefusal> RequestGuard::Check(const httplib::Request& request) const {
  if (auto refused = CheckHost(request)) return refused;

  const bool chunked = request.has_header("Transfer-Encoding");
  const bool has_length = request.has_header("Content-Length");
  if (chunked && has_length) {
    // Which one frames the body is exactly what request smuggling plays on.
    return RequestRefusal{400,
                          "400 a request may not carry both Content-Length and "
                          "Transfer-Encoding"};
  }
  if (request.get_header_value_count("Content-Length") > 1 ||
      request.get_header_value_count("Transfer-Encoding") > 1) {
    return RequestRefusal{400, "400 repeated Content-Length or Transfer-Encoding header"};
  }
  if (chunked &&
      absl::AsciiStrToLower(request.get_header_value("Transfer-Encoding")) != "chunked") {
    return RequestRefusal{501, "501 the only Transfer-Encoding accepted is chunked"};
  }
  uint64_t length = 0;
  if (has_length) {
    const std::string value = request.get_header_value("Content-Length");
    if (value.empty() || value.size() > 19 ||
        !std::all_of(value.begin(), value.end(), [](char c) { return absl::ascii_isdigit(c); }) ||
        !absl::SimpleAtoi(value, &length)) {
      return RequestRefusal{400, "400 Content-Length is not a number of bytes"};
    }
  }
  const uint64_t limit = BodyLimitFor(request);
  if (limit == 0 && (chunked || length > 0)) {
    return RequestRefusal{
        413, absl::StrCat("413 ", request.method, " ", request.path.substr(0, 200),
                          " takes no request body. Fix: send the request without one")};
  }
  if (length > limit) {
    return RequestRefusal{
        413, absl::StrCat("413 the request body is ", FormatByteSize(length), ", over the ",
                          FormatByteSize(limit), " that ", request.method, " ",
                          request.path.substr(0, 200), " accepts")};
  }
  if (const BodyLimit* route = RouteOf(request); route != nullptr && route->admit) {
    return route->admit(request);
  }
  return std::nullopt;
}

}  // namespace farm::coordinator
