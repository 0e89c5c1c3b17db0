// Filesystem image actions (farm-cc's host compiles): their toolchain and input trees, checked
// and laid out as the root a sandbox shows the command. A tree comes from a client: every path
// is checked (libfarm/file_tree) before anything is written, and nothing is ever written
// through a link.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "farm/v1/actions.pb.h"
#include "libfarm/file_tree/file_tree.h"
#include "worker/blob_cache.h"

namespace farm::worker {

// The flat tree `root` names: one tree blob, or a tree sent as directories by digest
// (libfarm/file_tree/subtrees.h), each blob read through `cache` (so a worker fetches the
// directories a build's compiles share once) and checked as ValidateFileTree checks a tree.
absl::StatusOr<farm::v1::FileTree> ReadFileTree(const farm::v1::Digest& root, BlobCache* cache);

// The two trees of one action must agree: a path both name is the same file (same digest) or
// the same link; no entry of one lies below a link of the other.
absl::Status CheckTreesAgree(const farm::v1::FileTree& toolchain, const farm::v1::FileTree& inputs);

// INVALID_ARGUMENT when one of `paths` (relative: the outputs, the working directory less '/')
// is or lies below a link of either tree: the worker would write through it, out of the scratch.
absl::Status CheckNotThroughLinks(const std::vector<std::string>& paths,
                                  const farm::v1::FileTree& toolchain,
                                  const farm::v1::FileTree& inputs);

// Writes `tree`'s links and files under `root`, each file read-only with its mtime_seconds.
// Below one of `writable_dirs` (relative: the directories the sandbox lets the action write) a
// file is a verified copy from `cache`; elsewhere a hard link to the cache's read-only copy
// (BlobCache::LinkAt): a link, not a new file, per header. A second path with the same content,
// mtime and mode is a copy too, so no two paths share an inode, as on the build host (clang
// tells files apart by inode). A path already there is left as it is: the toolchain's mount
// point for the same file (call MountPointsFor first, and CheckTreesAgree before both).
absl::Status LayOutFileTree(const farm::v1::FileTree& tree, const std::string& root,
                            BlobCache* cache, const std::vector<std::string>& writable_dirs);

// For a tree shown read-only over `root` (the toolchain's): its links under `root`, and an empty
// file at each file's path as the mount point; returns {host file under `tree_root`, path
// inside} for the sandbox.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> MountPointsFor(
    const farm::v1::FileTree& tree, const std::string& tree_root, const std::string& root);

}  // namespace farm::worker
