// UTF-8 as protobuf's `string` fields require it. Text from outside the farm (process
// output, file and member names, uploaded metadata) may hold any bytes; a proto3 `string`
// field serializes them but refuses to parse them, so one such byte stored or sent makes
// the whole message unreadable on the other side. Text is made valid where it enters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace farm {

// Length of the UTF-8 sequence starting at text[i] and its code point; 0 when the bytes
// there are not valid UTF-8 (overlong forms and surrogates included), -1 when they may be
// the start of a sequence that `text` cuts off.
int DecodeUtf8(absl::string_view text, size_t i, uint32_t* code_point);

bool IsValidUtf8(absl::string_view text);

// The offset of the first byte that is not part of valid UTF-8, or text.size().
size_t FirstInvalidUtf8(absl::string_view text);

// `text` when it is valid UTF-8; otherwise each byte that is not part of a valid sequence
// becomes the four characters "\xNN" and the rest is kept. The same escape as
// terminal_text.h, so a farmctl shows such text alike whichever side escaped it. Not
// reversible (a backslash is left alone): the original bytes stay where they came from
// (the CAS for action output, the quarantine for stored records).
std::string ValidUtf8OrEscaped(absl::string_view text);

// The first at most `max_bytes` bytes of `text`, less the start of a character the cut would
// split (at most 3 bytes), so a shortened text never ends mid-character.
absl::string_view Utf8Prefix(absl::string_view text, size_t max_bytes);

// The last at most `max_bytes` bytes of `text`, less the continuation bytes at its start
// of a character the cut split (at most 3), so a tail never begins mid-character.
absl::string_view Utf8Tail(absl::string_view text, size_t max_bytes);

}  // namespace farm
