// Core Metadata (a wheel's .dist-info/METADATA): RFC 822-style "Key: Value" headers,
// continuation lines, then an optional body holding the long description.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

struct CoreMetadata {
  // Every header in file order; keys as written ("Requires-Dist"), values unfolded.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // the description when given as the message body

  // First value of `key` (case-insensitive), or "" when absent.
  std::string Get(absl::string_view key) const;
  // Every value of a multi-use field such as Classifier or Requires-Dist.
  std::vector<std::string> GetAll(absl::string_view key) const;

  std::string metadata_version() const { return Get("Metadata-Version"); }
  std::string name() const { return Get("Name"); }
  std::string version() const { return Get("Version"); }
  std::string requires_python() const { return Get("Requires-Python"); }
};

// Parses METADATA text. Name and Version are required (the only fields an index cannot do
// without); errors say which is missing. Text that is not UTF-8 is refused, naming the line.
absl::StatusOr<CoreMetadata> ParseCoreMetadata(absl::string_view text);

// PEP 503 project name normalization: runs of "-", "_", "." become "-", lowercased.
std::string NormalizeProjectName(absl::string_view name);

}  // namespace farm
