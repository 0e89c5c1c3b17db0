#include "libfarm/process/environment.h"

#include <cstdlib>

extern char** environ;

namespace farm {

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

std::string GetEnvOr(const char* name, const std::string& fallback) {
  std::string value = GetEnv(name);
  return value.empty() ? fallback : value;
}

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

}  // namespace farm
