#include "worker/build_host_environment.h"

#include "absl/strings/match.h"

namespace farm::worker {
namespace {

constexpr absl::string_view kNames[] = {"PATH",
                                        "HOME",
                                        "LANG",
                                        "LANGUAGE",
                                        "TZ",
                                        "CUDA_HOME",
                                        "http_proxy",
                                        "https_proxy",
                                        "no_proxy",
                                        "all_proxy",
                                        "HTTP_PROXY",
                                        "HTTPS_PROXY",
                                        "NO_PROXY",
                                        "ALL_PROXY",
                                        "SSL_CERT_FILE",
                                        "SSL_CERT_DIR",
                                        "REQUESTS_CA_BUNDLE",
                                        "CURL_CA_BUNDLE"};
constexpr absl::string_view kPrefixes[] = {"LC_", "PIP_", "FARM_NVCC_"};

}  // namespace

bool PassesToBuilds(absl::string_view name) {
  for (absl::string_view n : kNames) {
    if (name == n) return true;
  }
  for (absl::string_view prefix : kPrefixes) {
    if (absl::StartsWith(name, prefix) && name.size() > prefix.size()) return true;
  }
  return false;
}

std::map<std::string, std::string> BuildHostEnvironment(const char* const* entries) {
  std::map<std::string, std::string> env;
  for (const char* const* e = entries; e != nullptr && *e != nullptr; ++e) {
    const absl::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == absl::string_view::npos || !PassesToBuilds(entry.substr(0, eq))) continue;
    env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

}  // namespace farm::worker
