// The FileTree of a filesystem image action (farm-cc's host compiles): a toolchain's closure or
// the files one compile reads, at absolute paths less the leading '/'. A tree comes from a
// client, so everything in it is checked before the coordinator queues it or a worker writes
// any of it.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "farm/v1/actions.pb.h"

namespace farm {

// A torch translation unit reads ~5,000 headers; its tree is ~0.5 MB.
inline constexpr int64_t kMaxFileTreeBytes = int64_t{64} << 20;
inline constexpr int kMaxFileTreeEntries = 200000;

// INVALID_ARGUMENT naming the entry: a path that is not relative and normalized, one that
// appears twice or lies below a link, a link without a target (or one over 4096 bytes or with
// a NUL), a file without a digest, anything under proc/ or dev/ (the kernel's, inside).
absl::Status ValidateFileTree(const farm::v1::FileTree& tree);

// INVALID_ARGUMENT when a directory above `path` ("a/b/c": "a", "a/b") is one of `links`:
// writing there would go through the link, anywhere on the worker.
absl::Status CheckNotBelowLink(const std::string& path, const std::set<std::string>& links);

// The file entry (its path, less the leading '/') that the absolute `path` names inside a
// sandbox whose root is `tree`, following the tree's links as the kernel would (at most 40);
// NOT_FOUND when it names no file of the tree.
absl::StatusOr<std::string> ResolveFileInTree(const farm::v1::FileTree& tree,
                                              const std::string& path);

// The tree's bytes as uploaded: the FileTree message, entries sorted by path, serialized
// deterministically. Two trees with the same entries have the same bytes.
std::string SerializeFileTree(const farm::v1::FileTree& tree);

// The digest of SerializeFileTree(tree): the tree's identity in the CAS.
farm::v1::Digest FileTreeDigest(const farm::v1::FileTree& tree);

}  // namespace farm
