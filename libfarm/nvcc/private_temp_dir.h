// A directory of farm-nvcc's own under TMPDIR for nvcc's temporaries and its own objects,
// removed with everything in it.
#pragma once

#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace farm {

class PrivateTempDir {
 public:
  // A new directory TMPDIR/farm-nvcc-XXXXXX (/tmp without TMPDIR).
  static absl::StatusOr<PrivateTempDir> Create();
  PrivateTempDir(PrivateTempDir&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  PrivateTempDir& operator=(PrivateTempDir&&) = delete;
  ~PrivateTempDir();
  const std::string& path() const { return path_; }

 private:
  explicit PrivateTempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace farm
