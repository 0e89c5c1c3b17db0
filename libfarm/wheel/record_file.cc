#include "libfarm/wheel/record_file.h"

#include <openssl/sha.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace farm {

absl::StatusOr<std::vector<RecordRow>> ParseRecord(absl::string_view text) {
  std::vector<RecordRow> rows;
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  bool field_started = false;
  size_t line = 1;
  auto end_row = [&]() -> absl::Status {
    fields.push_back(std::move(field));
    field.clear();
    field_started = false;
    if (fields.size() == 1 && fields[0].empty()) {  // blank line
      fields.clear();
      return absl::OkStatus();
    }
    if (fields.size() != 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("RECORD line ", line, ": expected 3 fields, got ", fields.size()));
    }
    RecordRow row{fields[0], fields[1], std::nullopt};
    if (!fields[2].empty()) {
      uint64_t size = 0;
      if (!absl::SimpleAtoi(fields[2], &size)) {
        return absl::InvalidArgumentError(
            absl::StrCat("RECORD line ", line, ": bad size \"", fields[2], "\""));
      }
      row.size = size;
    }
    rows.push_back(std::move(row));
    fields.clear();
    return absl::OkStatus();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field.push_back(c);
      }
      continue;
    }
    if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      field_started = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (absl::Status s = end_row(); !s.ok()) return s;
      ++line;
    } else {
      field.push_back(c);
      field_started = true;
    }
  }
  if (quoted) return absl::InvalidArgumentError("RECORD ends inside a quoted field");
  if (!field.empty() || !fields.empty()) {
    if (absl::Status s = end_row(); !s.ok()) return s;
  }
  return rows;
}

namespace {

// RECORD's spelling of a digest: urlsafe base64 without padding.
std::string RecordHash(absl::string_view digest) {
  return absl::StrCat("sha256=", absl::WebSafeBase64Escape(digest));
}

}  // namespace

std::string RecordSha256(ByteSpan data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(data.data(), data.size(), digest);
  return RecordHash(absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

std::string RecordSha256FromHex(absl::string_view sha256_hex) {
  if (sha256_hex.size() != 2 * SHA256_DIGEST_LENGTH ||
      !std::all_of(sha256_hex.begin(), sha256_hex.end(), absl::ascii_isxdigit)) {
    return "";
  }
  return RecordHash(absl::HexStringToBytes(sha256_hex));
}

}  // namespace farm
