// Digests name CAS blobs: SHA-256 as 64 lowercase hex characters, and the size in bytes.
// Written as HASH/SIZE for people and logs.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "farm/v1/cas.pb.h"
#include "google/protobuf/message.h"

namespace farm {

farm::v1::Digest DigestOfBytes(absl::string_view bytes);

// `message` serialized deterministically (map entries in key order), so equal messages give
// equal bytes within one build of the schema: for keys and digests, never for storage.
std::string DeterministicBytes(const google::protobuf::Message& message);

// DigestOfBytes(DeterministicBytes(message)).
farm::v1::Digest DigestOfMessage(const google::protobuf::Message& message);

// Reads `path` in chunks, so a file of any size is hashed in constant memory.
absl::StatusOr<farm::v1::Digest> DigestOfFile(const std::string& path);

// Accepts "HASH/SIZE" or a bare "HASH" (size_bytes -1: unknown). Errors name the form.
absl::StatusOr<farm::v1::Digest> ParseDigest(const std::string& text);

// "HASH/SIZE".
std::string DigestToString(const farm::v1::Digest& digest);

// 64 lowercase hex characters. Anything else is refused, which is also what makes a hash
// safe to use as a file name (no '/', no '..').
absl::Status ValidateHash(absl::string_view hash);

// A valid hash and size_bytes >= 0.
absl::Status ValidateDigest(const farm::v1::Digest& digest);

// Same hash and same size.
bool SameDigest(const farm::v1::Digest& a, const farm::v1::Digest& b);

}  // namespace farm
