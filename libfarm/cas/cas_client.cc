#include "libfarm/cas/cas_client.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "libfarm/cas/cas_limits.h"
#include "libfarm/cas/chunk_codec.h"
#include "libfarm/cas/verified_file_writer.h"
#include "libfarm/digest/digest.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/grpc_status.h"
#include "libfarm/rpc/retry.h"
#include "libfarm/rpc/token_auth.h"
#include "libfarm/status/status_macros.h"

namespace farm {

// Restartable byte source for one upload: every attempt reads from the beginning.
class CasClient::Source {
 public:
  virtual ~Source() = default;
  virtual absl::Status Rewind() = 0;
  // Fills up to `max` bytes; 0 at the end.
  virtual absl::StatusOr<size_t> Read(char* buf, size_t max) = 0;
};

namespace {

class FileSource : public CasClient::Source {
 public:
  explicit FileSource(std::string path) : path_(std::move(path)) {}
  ~FileSource() override {
    if (fd_ >= 0) ::close(fd_);
  }
  absl::Status Rewind() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      return absl::NotFoundError(absl::StrCat("cannot read ", path_, ": ", std::strerror(errno)));
    }
    posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> Read(char* buf, size_t max) override {
    size_t got = 0;
    while (got < max) {
      const ssize_t n = ::read(fd_, buf + got, max - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return absl::InternalError(absl::StrCat("reading ", path_, ": ", std::strerror(errno)));
      }
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    return got;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

class BytesSource : public CasClient::Source {
 public:
  explicit BytesSource(absl::string_view bytes) : bytes_(bytes) {}
  absl::Status Rewind() override {
    pos_ = 0;
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> Read(char* buf, size_t max) override {
    const size_t n = std::min(max, bytes_.size() - pos_);
    std::memcpy(buf, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }

 private:
  absl::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace

CasClient::CasClient(std::unique_ptr<farm::v1::CasService::StubInterface> stub, std::string token,
                     CasClientOptions options, std::string address)
    : stub_(std::move(stub)),
      token_(std::move(token)),
      options_(options),
      address_(std::move(address)) {}

std::unique_ptr<CasClient> CasClient::Connect(const std::string& address, const std::string& token,
                                              CasClientOptions options,
                                              const ChannelOptions& channel) {
  return std::make_unique<CasClient>(
      farm::v1::CasService::NewStub(DialCoordinator(address, channel)), token, options, address);
}

void CasClient::Prepare(grpc::ClientContext& ctx, int64_t stream_bytes) const {
  AttachToken(ctx, token_);
  // A stream may take as long as its bytes need at a pessimistic 1 MB/s; a hung peer is
  // still cut off eventually.
  const absl::Duration timeout =
      options_.rpc_timeout + absl::Seconds(std::max<int64_t>(0, stream_bytes) >> 20);
  ctx.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
}

absl::Status CasClient::Explain(const grpc::Status& status) const {
  absl::Status s = FromGrpcStatus(status);
  if (s.code() == absl::StatusCode::kUnavailable && !address_.empty()) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach the coordinator's CAS at ", address_, " (", s.message(), ")"));
  }
  return s;
}

absl::Status CasClient::WithRetries(const std::function<absl::Status()>& attempt) const {
  const bool patient = options_.patience > absl::ZeroDuration();
  // At least the one attempt: Retry reads 0 as no limit.
  return Retry({.max_attempts = patient ? 0 : std::max(1, options_.max_attempts),
                .deadline = patient ? absl::Now() + options_.patience : absl::InfiniteFuture(),
                .initial_backoff = options_.initial_backoff,
                .max_backoff = options_.max_backoff},
               attempt);
}

absl::StatusOr<std::vector<farm::v1::Digest>> CasClient::FindMissing(
    const std::vector<farm::v1::Digest>& digests) {
  return FindMissingIn(digests, {}, nullptr);
}

absl::StatusOr<std::optional<std::vector<farm::v1::Digest>>> CasClient::FindMissingWithTrees(
    const std::vector<farm::v1::Digest>& digests, const std::vector<farm::v1::Digest>& trees) {
  bool walked = false;
  FARM_ASSIGN_OR_RETURN(std::vector<farm::v1::Digest> missing,
                        FindMissingIn(digests, trees, &walked));
  if (!trees.empty() && !walked) return std::nullopt;
  return missing;
}

absl::StatusOr<std::vector<farm::v1::Digest>> CasClient::FindMissingIn(
    const std::vector<farm::v1::Digest>& digests, const std::vector<farm::v1::Digest>& trees,
    bool* trees_walked) {
  if (trees.size() > kCasFindMissingBatch) {
    return absl::InvalidArgumentError(
        absl::StrCat("FindMissing of ", trees.size(), " trees; at most ", kCasFindMissingBatch));
  }
  for (const auto* list : {&digests, &trees}) {
    for (const auto& d : *list) {
      if (absl::Status s = ValidateDigest(d); !s.ok()) return s;
    }
  }
  // Batches of digests; the trees go with the first.
  std::vector<farm::v1::Digest> missing;
  for (size_t start = 0; start < digests.size() || (start == 0 && !trees.empty());
       start += kCasFindMissingBatch) {
    farm::v1::FindMissingRequest req;
    const size_t end = std::min(digests.size(), start + kCasFindMissingBatch);
    for (size_t i = start; i < end; ++i) *req.add_digests() = digests[i];
    if (start == 0) {
      for (const auto& d : trees) *req.add_trees() = d;
    }
    farm::v1::FindMissingResponse resp;
    absl::Status s = WithRetries([&] {
      grpc::ClientContext ctx;
      Prepare(ctx, 0);
      resp.Clear();
      return Explain(stub_->FindMissing(&ctx, req, &resp));
    });
    if (!s.ok()) return s;
    if (start == 0 && trees_walked != nullptr) *trees_walked = resp.trees_walked();
    missing.insert(missing.end(), resp.missing().begin(), resp.missing().end());
  }
  return missing;
}

absl::StatusOr<farm::v1::StatResponse> CasClient::Stat(const farm::v1::Digest& digest) {
  if (absl::Status s = ValidateHash(digest.hash()); !s.ok()) return s;
  farm::v1::StatRequest req;
  *req.mutable_digest() = digest;
  farm::v1::StatResponse resp;
  absl::Status s = WithRetries([&] {
    grpc::ClientContext ctx;
    Prepare(ctx, 0);
    resp.Clear();
    return Explain(stub_->Stat(&ctx, req, &resp));
  });
  if (!s.ok()) return s;
  return resp;
}

absl::StatusOr<farm::v1::Digest> CasClient::UploadFile(const std::string& path) {
  bool uploaded = false;
  return UploadFile(path, &uploaded);
}

absl::StatusOr<farm::v1::Digest> CasClient::UploadFile(const std::string& path, bool* uploaded) {
  auto digest = DigestOfFile(path);
  if (!digest.ok()) return digest.status();
  FileSource source(path);
  return Upload(*digest, source, uploaded);
}

absl::StatusOr<farm::v1::Digest> CasClient::UploadBytes(absl::string_view bytes) {
  BytesSource source(bytes);
  bool uploaded = false;
  return Upload(DigestOfBytes(bytes), source, &uploaded);
}

absl::StatusOr<farm::v1::Digest> CasClient::Upload(const farm::v1::Digest& digest, Source& source,
                                                   bool* uploaded) {
  *uploaded = false;
  auto missing = FindMissing({digest});
  if (!missing.ok()) return missing.status();
  if (missing->empty()) return digest;
  absl::Status s = WithRetries([&] { return UploadOnce(digest, source, uploaded); });
  if (!s.ok()) return s;
  return digest;
}

absl::Status CasClient::UploadOnce(const farm::v1::Digest& digest, Source& source, bool* uploaded) {
  if (absl::Status s = source.Rewind(); !s.ok()) return s;
  grpc::ClientContext ctx;
  Prepare(ctx, digest.size_bytes());
  farm::v1::UploadResponse resp;
  std::unique_ptr<grpc::ClientWriterInterface<farm::v1::UploadRequest>> writer =
      stub_->Upload(&ctx, &resp);
  farm::v1::UploadRequest req;
  *req.mutable_digest() = digest;
  ChunkCodec codec;
  std::string packed;
  absl::Status source_error;
  bool first = true;
  bool stream_open = true;
  while (true) {
    // Read straight into the message's buffer: no copy of the chunk on our side.
    std::string* data = req.mutable_data();
    data->resize(kCasChunkBytes);
    absl::StatusOr<size_t> n = source.Read(data->data(), data->size());
    if (!n.ok()) {
      source_error = n.status();
      break;
    }
    data->resize(*n);
    if (*n == 0 && !first) break;
    req.set_compression(farm::v1::COMPRESSION_NONE);
    if (options_.compress && *n > 0 && codec.Compress(*data, &packed)) {
      data->swap(packed);
      req.set_compression(farm::v1::COMPRESSION_ZSTD);
    }
    if (!writer->Write(req)) {
      // The server ended the call early: it had the blob already, or refused it. Finish says.
      stream_open = false;
      break;
    }
    if (first) {
      req.clear_digest();
      first = false;
    }
    if (*n == 0) break;  // the empty blob: one message, no data
  }
  if (!source_error.ok()) {
    ctx.TryCancel();
    writer->Finish();
    return source_error;
  }
  if (stream_open) writer->WritesDone();
  grpc::Status status = writer->Finish();
  if (!status.ok()) {
    absl::Status s = Explain(status);
    if (s.code() == absl::StatusCode::kInvalidArgument) {
      return absl::InvalidArgumentError(
          absl::StrCat(s.message(), " (did the file change while it was being uploaded?)"));
    }
    return s;
  }
  *uploaded = !resp.already_present();
  return absl::OkStatus();
}

absl::Status CasClient::DownloadOnce(const farm::v1::Digest& digest, int64_t offset,
                                     const std::function<absl::Status(absl::string_view)>& sink) {
  grpc::ClientContext ctx;
  Prepare(ctx, digest.size_bytes() - offset);
  farm::v1::DownloadRequest req;
  *req.mutable_digest() = digest;
  req.set_offset(offset);
  req.set_accept_compression(options_.compress ? farm::v1::COMPRESSION_ZSTD
                                               : farm::v1::COMPRESSION_NONE);
  std::unique_ptr<grpc::ClientReaderInterface<farm::v1::DownloadResponse>> reader =
      stub_->Download(&ctx, req);
  farm::v1::DownloadResponse resp;
  ChunkCodec codec;
  std::string plain;
  while (reader->Read(&resp)) {
    absl::Status s;
    if (resp.compression() == farm::v1::COMPRESSION_ZSTD) {
      s = codec.Decompress(resp.data(), kCasMaxMessageBytes, &plain);
      if (s.ok()) s = sink(plain);
    } else {
      s = sink(resp.data());
    }
    if (!s.ok()) {
      ctx.TryCancel();
      reader->Finish();
      return s;
    }
  }
  return Explain(reader->Finish());
}

absl::Status CasClient::Download(const farm::v1::Digest& digest,
                                 const std::function<int64_t()>& bytes_so_far,
                                 const std::function<absl::Status(absl::string_view)>& sink) {
  // A retry resumes where the cut stream stopped; the running hash in the sink carries on.
  return WithRetries([&] { return DownloadOnce(digest, bytes_so_far(), sink); });
}

namespace {

// The size of a blob named with an unknown size (-1): a Stat learns it, and a missing blob
// becomes a clear NOT_FOUND before any file is created.
absl::StatusOr<farm::v1::Digest> ResolveSize(CasClient& client, const farm::v1::Digest& digest) {
  if (absl::Status s = ValidateHash(digest.hash()); !s.ok()) return s;
  if (digest.size_bytes() >= 0) return digest;
  auto stat = client.Stat(digest);
  if (!stat.ok()) return stat.status();
  if (!stat->present()) {
    return absl::NotFoundError(absl::StrCat("blob ", digest.hash(), " is not in the CAS"));
  }
  return stat->digest();
}

absl::Status TooMuch(const farm::v1::Digest& digest) {
  return absl::DataLossError(
      absl::StrCat("the coordinator sent more bytes than blob ", DigestToString(digest), " holds"));
}

}  // namespace

absl::Status CasClient::DownloadToFile(const farm::v1::Digest& requested, const std::string& path) {
  auto digest = ResolveSize(*this, requested);
  if (!digest.ok()) return digest.status();
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  auto writer = VerifiedFileWriter::Create(dir.string());
  if (!writer.ok()) return writer.status();
  // Whoever asked for the file reads it later if at all; a large download should not evict
  // the page cache of everything else on the machine.
  writer->DropBehind();
  absl::Status s = Download(
      *digest, [&] { return writer->bytes_written(); },
      [&](absl::string_view data) {
        if (writer->bytes_written() + static_cast<int64_t>(data.size()) > digest->size_bytes()) {
          return TooMuch(*digest);
        }
        return writer->Append(data);
      });
  if (!s.ok()) return s;
  auto got = writer->FinishExpecting(*digest);
  if (!got.ok()) {
    return absl::DataLossError(
        absl::StrCat("download of ", DigestToString(*digest),
                     " was corrupt and was discarded: ", got.status().message()));
  }
  return writer->MoveTo(path);
}

absl::StatusOr<std::string> CasClient::DownloadBytes(const farm::v1::Digest& requested,
                                                     int64_t max_bytes) {
  auto digest = ResolveSize(*this, requested);
  if (!digest.ok()) return digest.status();
  if (digest->size_bytes() > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("blob ", DigestToString(*digest), " is larger than the ", max_bytes,
                     " bytes allowed here; download it to a file instead"));
  }
  std::string out;
  out.reserve(static_cast<size_t>(digest->size_bytes()));
  absl::Status s = Download(
      *digest, [&] { return static_cast<int64_t>(out.size()); },
      [&](absl::string_view data) {
        if (static_cast<int64_t>(out.size() + data.size()) > digest->size_bytes()) {
          return TooMuch(*digest);
        }
        out.append(data.data(), data.size());
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  farm::v1::Digest actual = DigestOfBytes(out);
  if (!SameDigest(actual, *digest)) {
    return absl::DataLossError(absl::StrCat("download of ", DigestToString(*digest),
                                            " was corrupt (got ", DigestToString(actual), ")"));
  }
  return out;
}

}  // namespace farm
