// Bounds-checked little-endian reads over untrusted bytes (ELF, fat binaries, zip).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include "absl/strings/string_view.h"

namespace farm {

using ByteSpan = std::span<const uint8_t>;

// Every format read here is little-endian, and so are the hosts Wheelfarm runs on
// (x86_64, aarch64): loads are plain copies.
static_assert(std::endian::native == std::endian::little,
              "byte readers assume a little-endian host");

// The value of type T at `offset`, or nullopt when it does not fit inside `data`.
template <typename T>
std::optional<T> LoadLE(ByteSpan data, uint64_t offset) {
  if (offset > data.size() || data.size() - offset < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, data.data() + offset, sizeof(T));
  return value;
}

// Bytes [offset, offset + size) of `data`, or nullopt when that range leaves `data`.
inline std::optional<ByteSpan> SubSpan(ByteSpan data, uint64_t offset, uint64_t size) {
  if (offset > data.size() || data.size() - offset < size) return std::nullopt;
  return data.subspan(offset, size);
}

// The NUL-terminated string starting at `offset`, bounded by `data`; nullopt when the
// offset is out of range or no terminator follows.
inline std::optional<std::string_view> CStringAt(ByteSpan data, uint64_t offset) {
  if (offset >= data.size()) return std::nullopt;
  const auto* begin = reinterpret_cast<const char*>(data.data() + offset);
  const void* nul = std::memchr(begin, 0, data.size() - offset);
  if (nul == nullptr) return std::nullopt;
  return std::string_view(begin, static_cast<const char*>(nul) - begin);
}

inline std::string_view AsChars(ByteSpan data) {
  return std::string_view(reinterpret_cast<const char*>(data.data()), data.size());
}

// The same for Abseil APIs: Debian's absl::string_view is not std::string_view.
inline absl::string_view AsAbslChars(ByteSpan data) {
  return absl::string_view(reinterpret_cast<const char*>(data.data()), data.size());
}

inline ByteSpan AsBytes(std::string_view text) {
  return ByteSpan(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace farm
