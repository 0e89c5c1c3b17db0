#include "libfarm/text/terminal_text.h"

#include <cstdint>

#include "absl/strings/str_format.h"
#include "libfarm/text/utf8.h"

namespace farm {
namespace {

// C1 controls, and the characters that reorder text on screen (embeddings, overrides and
// isolates): what is shown would not be what was printed.
bool IsInvisibleControl(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

// Escapes text[0, end) into `out`; returns how many bytes at the end were left for more
// input (an incomplete UTF-8 sequence or a final CR), when `more_may_follow`.
size_t EscapeInto(absl::string_view text, bool more_may_follow, std::string* out) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
      out->push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (c == '\r') {
      if (i + 1 == text.size() && more_may_follow) return 1;
      if (i + 1 < text.size() && text[i + 1] == '\n') {
        out->append("\r\n");
        i += 2;
      } else {
        out->append("\\r");
        ++i;
      }
      continue;
    }
    if (c < 0x80) {  // the other C0 controls and DEL
      absl::StrAppendFormat(out, "\\x%02x", c);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const int length = DecodeUtf8(text, i, &cp);
    if (length < 0 && more_may_follow) return text.size() - i;
    if (length <= 0) {
      absl::StrAppendFormat(out, "\\x%02x", c);
      ++i;
    } else if (IsInvisibleControl(cp)) {
      absl::StrAppendFormat(out, "\\u%04x", cp);
      i += length;
    } else {
      out->append(text.data() + i, static_cast<size_t>(length));
      i += length;
    }
  }
  return 0;
}

}  // namespace

std::string EscapeTerminalText(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  EscapeInto(text, false, &out);
  return out;
}

std::string TerminalTextEscaper::Feed(absl::string_view chunk) {
  pending_.append(chunk.data(), chunk.size());
  std::string out;
  out.reserve(pending_.size());
  const size_t kept = EscapeInto(pending_, true, &out);
  pending_.erase(0, pending_.size() - kept);
  return out;
}

std::string TerminalTextEscaper::Finish() {
  std::string out = EscapeTerminalText(pending_);
  pending_.clear();
  return out;
}

}  // namespace farm
