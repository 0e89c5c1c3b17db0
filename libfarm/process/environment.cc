#include "libfarm/process/environment.h"

#include <cstdlib>

namespace farm {

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

}  // namespace farm
