// How a launcher reads its settings. Every argument is the compiler's, so they come from the
// environment: one table of variables per launcher, each entry saying how a value goes into
// its config, read by one loader that refuses a value it cannot take (naming the variable, the
// value and the fix) instead of ignoring it. An empty value is no value, as unset.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "libfarm/process/environment.h"

namespace farm {

// One variable and how a value of it (set, not empty) goes into a `Config`; an error names
// the variable, the value and the fix (BadValue).
template <typename Config>
struct ConfigVariable {
  const char* name;
  std::function<absl::Status(const char* name, const std::string& value, Config& config)> set;
};

// Reads every variable of `table` that `env` has into `config`, in the table's order; the
// first refusal.
template <typename Config>
absl::Status LoadConfigVariables(const std::vector<ConfigVariable<Config>>& table,
                                 const EnvironmentLookup& env, Config& config) {
  for (const ConfigVariable<Config>& variable : table) {
    const std::string value = env(variable.name);
    if (value.empty()) continue;
    if (absl::Status s = variable.set(variable.name, value, config); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// INVALID_ARGUMENT "NAME='value' <problem>. Fix: <fix>".
absl::Status BadValue(const char* name, absl::string_view value, absl::string_view problem,
                      absl::string_view fix);

// 1, true, yes, on and 0, false, no, off, in any case; nullopt for anything else (a typo must
// not read as "off").
std::optional<bool> ParseStrictBool(absl::string_view value);

// A boolean variable into `field`; `fix` says what to set it to, and for what, or to unset it.
template <typename Config>
ConfigVariable<Config> BoolVariable(const char* name, bool Config::*field, std::string fix) {
  return {name, [field, fix = std::move(fix)](const char* name, const std::string& value,
                                              Config& config) {
            const std::optional<bool> parsed = ParseStrictBool(value);
            if (!parsed) {
              return BadValue(name, value,
                              "is not a boolean (1, true, yes, on or 0, false, no, off)", fix);
            }
            config.*field = *parsed;
            return absl::OkStatus();
          }};
}

// A variable whose value is taken as it is into `field`.
template <typename Config>
ConfigVariable<Config> TextVariable(const char* name, std::string Config::*field) {
  return {name, [field](const char*, const std::string& value, Config& config) {
            config.*field = value;
            return absl::OkStatus();
          }};
}

}  // namespace farm
