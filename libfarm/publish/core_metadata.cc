#include "libfarm/publish/core_metadata.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace farm {

std::string CoreMetadata::Get(absl::string_view key) const {
  for (const auto& [k, v] : headers) {
    if (absl::EqualsIgnoreCase(k, key)) return v;
  }
  return "";
}

std::vector<std::string> CoreMetadata::GetAll(absl::string_view key) const {
  std::vector<std::string> values;
  for (const auto& [k, v] : headers) {
    if (absl::EqualsIgnoreCase(k, key)) values.push_back(v);
  }
  return values;
}

absl::StatusOr<CoreMetadata> ParseCoreMetadata(absl::string_view text) {
  CoreMetadata metadata;
  absl::string_view rest = text;
  int line_number = 0;
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    absl::string_view line = rest.substr(0, eol);
    rest = eol == absl::string_view::npos ? absl::string_view() : rest.substr(eol + 1);
    ++line_number;
    absl::ConsumeSuffix(&line, "\r");
    if (line.empty()) {
      // The body (long description) follows the first blank line.
      metadata.body = std::string(rest);
      break;
    }
    if (line.front() == ' ' || line.front() == '\t') {
      if (metadata.headers.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("METADATA line ", line_number, " continues a header that never began"));
      }
      absl::StrAppend(&metadata.headers.back().second, "\n", absl::StripAsciiWhitespace(line));
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "METADATA line ", line_number, ": expected \"Key: Value\", got \"", line, "\""));
    }
    metadata.headers.emplace_back(std::string(absl::StripAsciiWhitespace(line.substr(0, colon))),
                                  std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  if (metadata.name().empty()) {
    return absl::InvalidArgumentError("METADATA has no Name: field");
  }
  if (metadata.version().empty()) {
    return absl::InvalidArgumentError("METADATA has no Version: field");
  }
  return metadata;
}

std::string NormalizeProjectName(absl::string_view name) {
  std::string out;
  bool in_separator = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_separator) out.push_back('-');
      in_separator = true;
    } else {
      out.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
      in_separator = false;
    }
  }
  return out;
}

}  // namespace farm
