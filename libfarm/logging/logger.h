// One named spdlog logger per component ("coordinator", "worker", "farmctl").
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "absl/strings/string_view.h"

namespace farm {

// Returns the logger for `component`, creating it (stderr sink) on first use.
std::shared_ptr<spdlog::logger> ComponentLogger(const std::string& component);

// Sets the level of every component logger from "debug", "info", "warn", "error".
bool SetLogLevel(const std::string& level);

}  // namespace farm

// Debian's Abseil has its own string_view type (not std::string_view); let spdlog print it,
// e.g. status.message().
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  template <typename FormatContext>
  auto format(absl::string_view v, FormatContext& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(v.data(), v.size()), ctx);
  }
};
