#include "libfarm/files/source_tree_walk.h"

#include <filesystem>

#include "absl/strings/str_cat.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

// `entry` at `depth` (0: directly in the tree's root).
bool IsLeftover(const fs::path& name, int depth, bool is_directory) {
  if (name == ".git" || name == "__pycache__") return true;
  return is_directory && depth == 0 && (name == "build" || name == "dist");
}

}  // namespace

absl::Status WalkSourceTree(const std::string& dir,
                            const std::function<absl::Status(const SourceTreeFile&)>& visit) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(absl::StrCat("source tree ", dir, " is not a directory"));
  }
  size_t files = 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const fs::path relative = it->path().lexically_relative(dir);
    const bool is_directory = it->is_directory(ec) && !it->is_symlink(ec);
    if (IsLeftover(relative.filename(), it.depth(), is_directory)) {
      if (is_directory) it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(ec)) {
      return absl::FailedPreconditionError(
          absl::StrCat("source tree ", dir, " has a symlink: ", relative.string(),
                       ". Fix: replace it with the file it points to"));
    }
    if (!it->is_regular_file(ec)) continue;
    const auto perms = it->status(ec).permissions();
    ++files;
    if (absl::Status s = visit({relative.string(), it->path().string(),
                                (perms & fs::perms::owner_exec) != fs::perms::none});
        !s.ok()) {
      return s;
    }
  }
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read source tree ", dir, ": ", ec.message()));
  }
  if (files == 0) {
    return absl::FailedPreconditionError(absl::StrCat("source tree ", dir, " has no files"));
  }
  return absl::OkStatus();
}

}  // namespace farm
