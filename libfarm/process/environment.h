// Reading this process's environment.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace farm {

// The value of the environment variable `name`; "" when it is unset (callers treat unset and
// empty alike).
std::string GetEnv(const char* name);

// The value of `name` when it is set and not empty; `fallback` otherwise.
std::string GetEnvOr(const char* name, const std::string& fallback);

// Reads a variable as GetEnv does ("" when unset or empty): GetEnv itself, or a fake
// environment in a test.
using EnvironmentLookup = std::function<std::string(const char* name)>;

// Every variable of this process's environment, by name.
std::map<std::string, std::string> ProcessEnvironment();

}  // namespace farm
