// The shared farm token: how it is stored on disk and compared.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace farm {

// Reads a token file; surrounding whitespace is ignored. Errors name the file and the fix.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// Creates `path` (mode 0600, never overwriting) holding a fresh random token.
absl::StatusOr<std::string> CreateTokenFile(const std::string& path);

// A fresh random token (64 hex characters).
absl::StatusOr<std::string> GenerateToken();

// `bytes` bytes from the kernel's random source, as hex: for secrets (tokens, session ids).
absl::StatusOr<std::string> RandomHex(size_t bytes);

// What is stored instead of a token: its SHA-256, hex. Tokens are random, so no salt.
std::string TokenDigest(absl::string_view token);

// Compares in time independent of where the inputs differ.
bool TokensEqual(absl::string_view a, absl::string_view b);

}  // namespace farm
