// Walks a package's source tree the way a wheel build ships it: every regular file, minus
// what a local build left behind (.git, __pycache__, and a top-level build/ or dist/).
// Symlinks are refused: a tree that points outside itself cannot be shipped as is.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"

namespace farm {

struct SourceTreeFile {
  std::string relative;  // "src/saxpy.cu"
  std::string path;      // on disk
  bool executable = false;
};

// Calls `visit` for each file, in directory order; stops at its first error.
// FAILED_PRECONDITION for a missing directory, a symlink or an unreadable entry, and for a
// tree with no file.
absl::Status WalkSourceTree(const std::string& dir,
                            const std::function<absl::Status(const SourceTreeFile&)>& visit);

}  // namespace farm
