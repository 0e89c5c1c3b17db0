// FindMissing's answer (cas.proto): which blobs the store lacks among the digests a client
// names and what the tree blobs it names hold. Asking by tree lets a compile with thousands
// of headers, sent as directories by digest, ask about a few hundred digests instead.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/cas/blob_store.h"
#include "farm/v1/cas.pb.h"

namespace farm::coordinator {

// Each of `digests` the store lacks; each of `trees` it lacks; and for each tree it holds,
// every file and subtree the tree names directly that it lacks. Each digest once, in the
// order first met. INVALID_ARGUMENT for a malformed digest, a tree blob that is not a
// FileTree, or more than 10,000 trees or 64 MiB of them in one request.
absl::StatusOr<std::vector<farm::v1::Digest>> MissingBlobs(
    BlobStore& store, const google::protobuf::RepeatedPtrField<farm::v1::Digest>& digests,
    const google::protobuf::RepeatedPtrField<farm::v1::Digest>& trees);

}  // namespace farm::coordinator
