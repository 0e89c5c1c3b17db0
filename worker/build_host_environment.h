// What a wheel build (and its environment step) gets of the worker's own environment. A build
// runs code the farm did not write, so it gets an allow-list, never the whole environment: a
// secret in the worker's unit (a cloud key, a registry password, the worker's FARM_TOKEN_FILE)
// stays with the worker. Passed on: PATH, HOME (a private, empty directory in the sandbox),
// LANG, LANGUAGE, LC_*, TZ, CUDA_HOME, pip's settings (PIP_*), the proxies (http_proxy,
// https_proxy, no_proxy, all_proxy, in either case), the CA bundles pip, git and OpenSSL read
// (SSL_CERT_FILE, SSL_CERT_DIR, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE) and farm-nvcc's own
// settings (FARM_NVCC_*). The worker then sets the farm's variables for farm-nvcc
// (WheelBuildRunner::FarmNvccEnvironment), and a recipe's [build.env] may still name any
// worker variable explicitly ($VAR): that is the recipe author's choice, made where it shows.
#pragma once

#include <map>
#include <string>

#include "absl/strings/string_view.h"

namespace farm::worker {

// Whether the worker's variable `name` reaches the builds it runs.
bool PassesToBuilds(absl::string_view name);

// The entries ("NAME=value") of `entries` (null-terminated, as `environ` is) that pass.
std::map<std::string, std::string> BuildHostEnvironment(const char* const* entries);

}  // namespace farm::worker
