// Protobuf messages whose `string` fields hold text from outside the farm. A proto3 `string`
// field serializes any bytes but refuses to parse bytes that are not UTF-8, so one such field
// makes the whole message unreadable to whoever receives or loads it. These apply
// ValidUtf8OrEscaped (utf8.h) to every string field of a message, nested messages, repeated
// fields and maps included; `bytes` fields are left alone.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace google::protobuf {
class Descriptor;
class Message;
}  // namespace google::protobuf

namespace farm {

// Escapes every string field of `message` that is not UTF-8, in place, before it is sent or
// stored. Returns how many values were escaped (0: unchanged).
int EscapeInvalidUtf8Fields(google::protobuf::Message* message);

// A string field whose value is not UTF-8: its path from the message ("capabilities.hostname",
// "capabilities.cuda[1].path", "capabilities.labels[\"zone\"]", a map's key as "labels key"),
// and the value escaped (ValidUtf8OrEscaped), at most 128 bytes of it.
struct InvalidUtf8Field {
  std::string path;
  std::string value;
};

// The string fields of `message` that are not UTF-8, in field order, at most `max`: what a
// refusal names.
std::vector<InvalidUtf8Field> InvalidUtf8Fields(const google::protobuf::Message& message,
                                                size_t max = 8);

// The same for `bytes` (as sent or stored) of a message of `type`, which ParseFromString
// refuses when they hold such text; empty when they do not parse even with every string taken
// as bytes.
std::vector<InvalidUtf8Field> InvalidUtf8FieldsOf(absl::string_view bytes,
                                                  const google::protobuf::Descriptor& type,
                                                  size_t max = 8);

// Parses `bytes` (as stored or sent) into `message` even where string fields hold bytes that
// are not UTF-8, which ParseFromString refuses: the bytes are read with every string field
// taken as `bytes` (the same wire format), then escaped. Returns how many values were escaped,
// or -1 when the bytes do not parse even so (they are not such a message at all).
int ParseEscapingInvalidUtf8(absl::string_view bytes, google::protobuf::Message* message);

}  // namespace farm
