// A wheel build's source tree as action inputs under "src/": ingested from a directory on the
// coordinator (a recipe's default tree) or checked after `farmctl submit --source` uploaded
// it. Paths and digests from a client are never trusted: each is checked here.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/cas/blob_store.h"
#include "farm/v1/actions.pb.h"

namespace farm::coordinator {

// Where the tree lives inside the build directory.
inline constexpr char kSourcePrefix[] = "src/";

// Reads the tree under `dir` (WalkSourceTree: no build leftovers, no symlinks) into the CAS.
absl::StatusOr<std::vector<farm::v1::InputFile>> IngestSourceTree(const std::string& dir,
                                                                  BlobStore* blobs);

// The uploaded `files` (paths relative to the tree's root) as inputs under "src/":
// INVALID_ARGUMENT for an unsafe or repeated path or a malformed digest, FAILED_PRECONDITION
// for a blob the CAS does not hold (upload it first), and for an empty tree.
absl::StatusOr<std::vector<farm::v1::InputFile>> CheckUploadedSource(
    const std::vector<farm::v1::InputFile>& files, BlobStore* blobs);

// A tree's identity for comparing builds: the hash over its paths, file digests and modes in
// path order, so the same files sent from any directory, in any order, give the same value.
std::string SourceTreeDigest(std::vector<farm::v1::InputFile> files);

}  // namespace farm::coordinator
