// Sizes shared by every CAS client and server.
#pragma once

#include <cstddef>

namespace farm {

// Blobs travel in chunks of this size (REAPI ByteStream uses the same order of magnitude):
// big enough that per-message overhead vanishes, small enough that a stream of many never
// costs more than a few MiB of memory on either side.
inline constexpr size_t kCasChunkBytes = 1 << 20;

// The largest gRPC message a CAS party accepts: a chunk plus framing, or a FindMissing of
// many thousands of digests.
inline constexpr int kCasMaxMessageBytes = 4 << 20;

// Most digests per FindMissing call, which keeps a request well under the message limit.
inline constexpr size_t kCasFindMissingBatch = 10000;

}  // namespace farm
