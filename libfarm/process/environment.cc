#include "libfarm/process/environment.h"

#include <cstdlib>

namespace farm {

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

std::string GetEnvOr(const char* name, const std::string& fallback) {
  std::string value = GetEnv(name);
  return value.empty() ? fallback : value;
}

}  // namespace farm
