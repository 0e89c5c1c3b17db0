// A FileTree sent as directories by digest (issue 45): each directory that holds entries is a
// FileTree blob of its own, with paths relative to it, named in its parent by a directory
// entry that carries the blob's digest. Compiles of one project read mostly the same header
// directories, so those blobs are sent and stored once, and each compile's own blob is small;
// REAPI's Directory tree has the same shape. A worker or the coordinator expands the root back
// into the flat tree everything else checks and lays out, reading each blob through a reader
// it trusts (its own blob cache, the CAS) and bounding what a client's blobs may add up to.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "farm/v1/actions.pb.h"
#include "farm/v1/cas.pb.h"

namespace farm {

// A tree split into its directories: the root blob and every directory's, each once.
struct SplitFileTree {
  farm::v1::Digest root;
  std::string root_bytes;
  std::vector<std::pair<farm::v1::Digest, std::string>> subtrees;  // {digest, bytes}, by digest
};

// The directories of `flat` (a valid tree) as blobs. An empty directory stays an entry without
// a digest; a directory entry whose path also holds entries is one subtree. Expanding the root
// gives `flat` back, entries sorted by path.
SplitFileTree SplitIntoSubtrees(const farm::v1::FileTree& flat);

// Reads one blob of a tree: its bytes, at most `max_bytes` of them.
using TreeBlobReader =
    absl::FunctionRef<absl::StatusOr<std::string>(const farm::v1::Digest&, int64_t max_bytes)>;

// The flat tree `root` stands for, validated as ValidateFileTree does: every subtree read through
// `read` and its entries placed under its directory. A flat tree (no subtrees) comes back as it
// is. INVALID_ARGUMENT naming the problem when the blobs add up to more than kMaxFileTreeBytes,
// more than kMaxFileTreeEntries entries (subtrees counted, so a blob named a million times
// stops early), or nest deeper than 256; the reader's error for a blob it cannot read.
absl::StatusOr<farm::v1::FileTree> ExpandFileTree(const farm::v1::Digest& root,
                                                  TreeBlobReader read);

}  // namespace farm
