// A daemon announces where it listens by writing a small JSON file once it serves; tools
// (farmctl up, tests) wait for it instead of guessing ports or sleeping.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace farm {

// Writes atomically (temp file + rename), so readers never see half a file.
absl::Status WriteJsonFileAtomically(const std::string& path, const nlohmann::json& value);
absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

}  // namespace farm
