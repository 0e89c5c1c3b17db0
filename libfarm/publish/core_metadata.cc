#include "libfarm/publish/core_metadata.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/text/utf8.h"

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

namespace {

// Core Metadata is UTF-8 (PEP 566): pip, twine and PyPI read it so. Refused rather than
// escaped, since an escaped Requires-Python is no longer what the author wrote, and the
// index serves METADATA byte for byte (PEP 658) next to what it lists from it.
absl::Status CheckUtf8(absl::string_view text) {
  const size_t bad = FirstInvalidUtf8(text);
  if (bad == text.size()) return absl::OkStatus();
  const size_t previous = text.rfind('\n', bad);
  const size_t begin = previous == absl::string_view::npos ? 0 : previous + 1;
  const size_t end = std::min(text.find('\n', bad), text.size());
  const auto line_number = 1 + std::count(text.begin(), text.begin() + bad, '\n');
  constexpr size_t kShown = 120;
  const absl::string_view line = text.substr(begin, std::min(end - begin, kShown));
  return absl::InvalidArgumentError(
      absl::StrCat("METADATA line ", line_number, " is not UTF-8 (byte ", bad - begin + 1, " of \"",
                   ValidUtf8OrEscaped(line),
                   "\"): Core Metadata is UTF-8 (PEP 566), as pip reads it. Fix: "
                   "write that field in UTF-8 and build the wheel again"));
}

}  // namespace

absl::StatusOr<CoreMetadata> ParseCoreMetadata(absl::string_view text) {
  if (absl::Status s = CheckUtf8(text); !s.ok()) return s;
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
