// A whole file mapped read-only, so parsers read headers without copying the file.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libfarm/elf/byte_span.h"

namespace farm {

class MappedFile {
 public:
  // How the caller will touch the pages; the kernel's read-ahead follows it.
  enum class Access { kRandom, kSequential };

  static absl::StatusOr<MappedFile> Open(const std::string& path, Access access = Access::kRandom);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  ByteSpan bytes() const { return ByteSpan(static_cast<const uint8_t*>(address_), size_); }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, void* address, size_t size)
      : path_(std::move(path)), address_(address), size_(size) {}

  std::string path_;
  void* address_ = nullptr;  // nullptr for an empty file: mmap refuses length 0
  size_t size_ = 0;
};

}  // namespace farm
