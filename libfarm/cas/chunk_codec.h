// zstd for CAS chunks on the wire: each compressed chunk is one self-contained zstd frame,
// so a stream can be cut and resumed at any chunk. One codec per stream (not thread-safe);
// it keeps its zstd contexts so 1 MiB chunks don't pay for a context each.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace farm {

class ChunkCodec {
 public:
  ChunkCodec();
  ~ChunkCodec();
  ChunkCodec(const ChunkCodec&) = delete;
  ChunkCodec& operator=(const ChunkCodec&) = delete;

  // Compresses `in` into `out`. Returns false when compressing does not pay (output not
  // smaller), so the caller sends the chunk raw; after such a chunk the next few (doubling
  // with each miss, up to 32) are not even tried.
  bool Compress(absl::string_view in, std::string* out);

  // Decompresses one frame into `out`, refusing frames that would exceed `max_out` bytes,
  // so a small malicious frame cannot balloon a server's memory.
  absl::Status Decompress(absl::string_view in, size_t max_out, std::string* out);

 private:
  ZSTD_CCtx_s* cctx_ = nullptr;
  ZSTD_DCtx_s* dctx_ = nullptr;
  int misses_ = 0;  // chunks skipped after the last miss
  int skip_ = 0;    // chunks still to send raw untried
};

}  // namespace farm
