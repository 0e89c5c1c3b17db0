// A client of the coordinator's content-addressed store (farm.v1.CasService), used by
// farmctl, workers and the bench. Blobs stream in 1 MiB chunks, so memory stays constant
// whatever the blob size; every download is verified against its digest before anyone
// sees it. Failures a retry may fix (libfarm/rpc/retry.h: the coordinator restarting, a
// connection cut, a deadline hit) are retried with backoff: uploads start over, downloads
// resume at the byte they reached.
//
// Thread-safe: calls share only the stub, which gRPC allows.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "farm/v1/cas.grpc.pb.h"
#include "libfarm/rpc/channel.h"

namespace farm {

struct CasClientOptions {
  // zstd-compress chunks on the wire (both directions). Worth it on slow links; on loopback
  // or a fast LAN it only costs CPU.
  bool compress = false;
  // Attempts per call, the first included, for what a retry may fix (libfarm/rpc/retry.h):
  // the coordinator away or restarting, a cut stream, a deadline hit, a conflict.
  int max_attempts = 5;
  // When set, replaces max_attempts: a call retries those failures until this long has
  // passed. A worker holds finished results that only the CAS can take; a coordinator
  // restarting must cost it a wait, not the work (it would run again elsewhere).
  absl::Duration patience = absl::ZeroDuration();
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(5);
  // Deadline of unary calls; streams get this plus one second per MiB (>= 1 MB/s).
  absl::Duration rpc_timeout = absl::Seconds(30);
};

class CasClient {
 public:
  // `address` only names the coordinator in error messages.
  CasClient(std::unique_ptr<farm::v1::CasService::StubInterface> stub, std::string token,
            CasClientOptions options = {}, std::string address = "");

  // Dials `address` over a real channel sized for CAS chunks.
  static std::unique_ptr<CasClient> Connect(const std::string& address, const std::string& token,
                                            CasClientOptions options = {},
                                            const ChannelOptions& channel = {});

  // Hashes the file, asks whether the store has it, and uploads it only if not.
  absl::StatusOr<farm::v1::Digest> UploadFile(const std::string& path);
  absl::StatusOr<farm::v1::Digest> UploadBytes(absl::string_view bytes);
  // Like UploadFile; `*uploaded` tells whether bytes were sent (false: already stored).
  absl::StatusOr<farm::v1::Digest> UploadFile(const std::string& path, bool* uploaded);

  // Downloads into a temp file beside `path`, verifies it, then renames it to `path`. On any
  // failure `path` is untouched and no temp file remains. size_bytes -1: unknown.
  absl::Status DownloadToFile(const farm::v1::Digest& digest, const std::string& path);
  // RESOURCE_EXHAUSTED when the blob is larger than `max_bytes`.
  absl::StatusOr<std::string> DownloadBytes(const farm::v1::Digest& digest, int64_t max_bytes);

  // The digests among `digests` the store lacks.
  absl::StatusOr<std::vector<farm::v1::Digest>> FindMissing(
      const std::vector<farm::v1::Digest>& digests);
  // The same, and the blobs `trees` (FileTree blobs) name directly that the store lacks, or a
  // tree itself it lacks (cas.proto, FindMissingRequest.trees); at most 10,000 trees. nullopt
  // when the coordinator does not walk trees (an older one): the caller asks about the files.
  absl::StatusOr<std::optional<std::vector<farm::v1::Digest>>> FindMissingWithTrees(
      const std::vector<farm::v1::Digest>& digests, const std::vector<farm::v1::Digest>& trees);
  absl::StatusOr<farm::v1::StatResponse> Stat(const farm::v1::Digest& digest);

  // Where one upload's bytes come from, restartable for retries (defined in the .cc).
  class Source;

 private:
  // FindMissing's batches, `trees` with the first; `trees_walked` (may be null) says whether
  // the store walked them.
  absl::StatusOr<std::vector<farm::v1::Digest>> FindMissingIn(
      const std::vector<farm::v1::Digest>& digests, const std::vector<farm::v1::Digest>& trees,
      bool* trees_walked);
  absl::StatusOr<farm::v1::Digest> Upload(const farm::v1::Digest& digest, Source& source,
                                          bool* uploaded);
  absl::Status UploadOnce(const farm::v1::Digest& digest, Source& source, bool* uploaded);
  // Streams the blob from `offset` into `sink`, which may already hold earlier bytes.
  absl::Status DownloadOnce(const farm::v1::Digest& digest, int64_t offset,
                            const std::function<absl::Status(absl::string_view)>& sink);
  absl::Status Download(const farm::v1::Digest& digest,
                        const std::function<int64_t()>& bytes_so_far,
                        const std::function<absl::Status(absl::string_view)>& sink);
  void Prepare(grpc::ClientContext& ctx, int64_t stream_bytes) const;
  // Runs `attempt` through Retry (libfarm/rpc/retry.h) with this client's attempts and pacing.
  absl::Status WithRetries(const std::function<absl::Status()>& attempt) const;
  absl::Status Explain(const grpc::Status& status) const;

  std::unique_ptr<farm::v1::CasService::StubInterface> stub_;
  std::string token_;
  CasClientOptions options_;
  std::string address_;
};

}  // namespace farm
