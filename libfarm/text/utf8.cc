#include "libfarm/text/utf8.h"

#include "absl/strings/str_format.h"

namespace farm {

int DecodeUtf8(absl::string_view text, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  int length = 0;
  uint32_t cp = 0;
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  }
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    cp = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    cp = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    cp = lead & 0x07;
  } else {
    return 0;
  }
  for (int k = 1; k < length; ++k) {
    if (i + k >= text.size()) return -1;
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min[length] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  *code_point = cp;
  return length;
}

size_t FirstInvalidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const int length = DecodeUtf8(text, i, &cp);
    if (length <= 0) return i;
    i += static_cast<size_t>(length);
  }
  return text.size();
}

bool IsValidUtf8(absl::string_view text) { return FirstInvalidUtf8(text) == text.size(); }

std::string ValidUtf8OrEscaped(absl::string_view text) {
  size_t i = FirstInvalidUtf8(text);
  if (i == text.size()) return std::string(text);
  std::string out(text.substr(0, i));
  out.reserve(text.size() + 16);
  while (i < text.size()) {
    uint32_t cp = 0;
    const int length = DecodeUtf8(text, i, &cp);
    if (length <= 0) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(text[i]));
      ++i;
    } else {
      out.append(text.data() + i, static_cast<size_t>(length));
      i += static_cast<size_t>(length);
    }
  }
  return out;
}

namespace {

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

}  // namespace

absl::string_view Utf8Prefix(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t keep = max_bytes;
  for (int k = 0; k < 3 && keep > 0 && IsContinuation(text[keep]); ++k) --keep;
  return text.substr(0, keep);
}

absl::string_view Utf8Tail(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  absl::string_view tail = text.substr(text.size() - max_bytes);
  for (int k = 0; k < 3 && !tail.empty() && IsContinuation(tail[0]); ++k) tail.remove_prefix(1);
  return tail;
}

}  // namespace farm
