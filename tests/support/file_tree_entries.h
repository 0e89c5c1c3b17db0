// FileTree entries for tests of the tree format and the code that checks, splits and lays out
// trees: a file with a made-up digest, a link, an empty directory, a tree of them. Header-only:
// libfarm's and the worker's unit tests use it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "farm/v1/actions.pb.h"

namespace farm::testing {

// A file entry whose digest is 64 times `fill` (10 bytes), with `mtime`.
inline farm::v1::InputFile TreeFile(const std::string& path, char fill = 'a', int64_t mtime = 0) {
  farm::v1::InputFile f;
  f.set_path(path);
  f.mutable_digest()->set_hash(std::string(64, fill));
  f.mutable_digest()->set_size_bytes(10);
  f.set_mtime_seconds(mtime);
  return f;
}

inline farm::v1::InputFile TreeLink(const std::string& path, const std::string& target) {
  farm::v1::InputFile f;
  f.set_path(path);
  f.set_symlink_target(target);
  return f;
}

inline farm::v1::InputFile TreeDirectory(const std::string& path) {
  farm::v1::InputFile f;
  f.set_path(path);
  f.set_directory(true);
  return f;
}

inline farm::v1::FileTree TreeOf(std::initializer_list<farm::v1::InputFile> entries) {
  farm::v1::FileTree t;
  for (const auto& e : entries) *t.add_files() = e;
  return t;
}

}  // namespace farm::testing
