#include "libfarm/cas/chunk_codec.h"

#include <zstd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace farm {
namespace {

// Level 1: the wire is the bottleneck only on slow links, and there any zstd level wins;
// higher levels would cost more CPU than they save on loopback or a LAN.
constexpr int kLevel = 1;

// After a chunk that did not shrink, this many chunks at most go raw untried: a stream of
// incompressible data (archives, wheels, object code already compressed) then pays for one
// compress attempt in 32 chunks instead of every one, and compressible data found again
// resets the count.
constexpr int kMaxSkip = 32;

}  // namespace

ChunkCodec::ChunkCodec() = default;

ChunkCodec::~ChunkCodec() {
  ZSTD_freeCCtx(cctx_);
  ZSTD_freeDCtx(dctx_);
}

bool ChunkCodec::Compress(absl::string_view in, std::string* out) {
  if (skip_ > 0) {
    --skip_;
    return false;
  }
  if (cctx_ == nullptr) cctx_ = ZSTD_createCCtx();
  if (cctx_ == nullptr) return false;
  out->resize(ZSTD_compressBound(in.size()));
  const size_t n = ZSTD_compressCCtx(cctx_, out->data(), out->size(), in.data(), in.size(), kLevel);
  if (ZSTD_isError(n) || n >= in.size()) {
    // Back off exponentially: 1, 2, 4 ... kMaxSkip chunks untried.
    misses_ = std::min(kMaxSkip, misses_ == 0 ? 1 : 2 * misses_);
    skip_ = misses_;
    return false;
  }
  misses_ = 0;
  out->resize(n);
  return true;
}

absl::Status ChunkCodec::Decompress(absl::string_view in, size_t max_out, std::string* out) {
  if (dctx_ == nullptr) dctx_ = ZSTD_createDCtx();
  if (dctx_ == nullptr) return absl::ResourceExhaustedError("cannot allocate a zstd context");
  const unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) {
    return absl::InvalidArgumentError("a zstd chunk is not a valid zstd frame");
  }
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > max_out) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a zstd chunk expands to ", declared, " bytes, over the ", max_out, "-byte chunk limit"));
  }
  out->resize(max_out);
  const size_t n = ZSTD_decompressDCtx(dctx_, out->data(), out->size(), in.data(), in.size());
  if (ZSTD_isError(n)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot decompress a zstd chunk: ", ZSTD_getErrorName(n)));
  }
  out->resize(n);
  return absl::OkStatus();
}

}  // namespace farm
