#include "coordinator/cas/cas_service.h"

#include "absl/strings/str_cat.h"
#include "coordinator/cas/blob_file_reader.h"
#include "coordinator/cas/missing_blobs.h"
#include "libfarm/cas/cas_limits.h"
#include "libfarm/cas/chunk_codec.h"
#include "libfarm/digest/digest.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {

CasServiceImpl::CasServiceImpl(const RpcGate* gate, BlobStore* store, MetricsRegistry* metrics)
    : gate_(gate), store_(store), traffic_(CasTraffic::In(metrics)) {
  metrics->AddRefreshHook([store, metrics] {
    metrics->GetGauge("farm_cas_blobs", "Blobs in the CAS.")
        ->Set(static_cast<double>(store->blob_count()));
    metrics->GetGauge("farm_cas_bytes_stored", "Bytes of blobs in the CAS.")
        ->Set(static_cast<double>(store->bytes_stored()));
    metrics->GetGauge("farm_cas_quota_bytes", "The CAS size quota (--cas-quota).")
        ->Set(static_cast<double>(store->quota_bytes()));
    metrics->GetGauge("farm_cas_evictions", "Blobs evicted to keep the quota since start.")
        ->Set(static_cast<double>(store->evictions()));
  });
}

grpc::Status CasServiceImpl::FindMissing(grpc::ServerContext* context,
                                         const farm::v1::FindMissingRequest* request,
                                         farm::v1::FindMissingResponse* response) {
  return gate_->Serve(*context, "CasService.FindMissing", [&] {
    FARM_ASSIGN_OR_RETURN(std::vector<farm::v1::Digest> missing,
                          MissingBlobs(*store_, request->digests(), request->trees()));
    for (farm::v1::Digest& d : missing) *response->add_missing() = std::move(d);
    response->set_trees_walked(request->trees_size() > 0);
    return absl::OkStatus();
  });
}

grpc::Status CasServiceImpl::Stat(grpc::ServerContext* context,
                                  const farm::v1::StatRequest* request,
                                  farm::v1::StatResponse* response) {
  return gate_->Serve(*context, "CasService.Stat", [&] {
    FARM_RETURN_IF_ERROR(ValidateHash(request->digest().hash()));
    *response = store_->Stat(request->digest());
    return absl::OkStatus();
  });
}

grpc::Status CasServiceImpl::Upload(grpc::ServerContext* context,
                                    grpc::ServerReader<farm::v1::UploadRequest>* reader,
                                    farm::v1::UploadResponse* response) {
  return gate_->Serve(*context, "CasService.Upload",
                      [&] { return ReceiveUpload(context, reader, response); });
}

absl::Status CasServiceImpl::ReceiveUpload(grpc::ServerContext* context,
                                           grpc::ServerReader<farm::v1::UploadRequest>* reader,
                                           farm::v1::UploadResponse* response) {
  farm::v1::UploadRequest req;
  if (!reader->Read(&req)) {
    return absl::InvalidArgumentError("empty upload: the first message must carry the digest");
  }
  const farm::v1::Digest claimed = req.digest();
  FARM_RETURN_IF_ERROR(ValidateDigest(claimed));
  *response->mutable_digest() = claimed;
  if (store_->Contains(claimed)) {
    // Returning now ends the stream; the client stops sending and sees OK.
    store_->Touch(claimed.hash());
    response->set_already_present(true);
    return absl::OkStatus();
  }
  FARM_ASSIGN_OR_RETURN(VerifiedFileWriter writer, store_->BeginWrite(claimed.size_bytes()));
  ChunkCodec codec;
  std::string plain;
  do {
    traffic_.bytes_in->Increment(static_cast<double>(req.data().size()));
    absl::string_view data = req.data();
    if (req.compression() == farm::v1::COMPRESSION_ZSTD) {
      FARM_RETURN_IF_ERROR(codec.Decompress(req.data(), kCasMaxMessageBytes, &plain));
      data = plain;
    }
    // Refuse as soon as the stream outgrows its claim, so a lying client cannot fill the disk.
    if (writer.bytes_written() + static_cast<int64_t>(data.size()) > claimed.size_bytes()) {
      return absl::InvalidArgumentError(absl::StrCat("upload rejected: more bytes than its digest ",
                                                     DigestToString(claimed),
                                                     " claims; nothing was stored"));
    }
    FARM_RETURN_IF_ERROR(writer.Append(data));
  } while (reader->Read(&req));
  if (context->IsCancelled()) return absl::CancelledError("the client cancelled the upload");
  auto stored = store_->Commit(std::move(writer), claimed);
  if (!stored.ok()) {
    if (stored.status().code() == absl::StatusCode::kInvalidArgument) {
      ComponentLogger("coordinator")
          ->warn("CAS upload from {} rejected: {}", context->peer(), stored.status().message());
      return absl::InvalidArgumentError(
          absl::StrCat("upload rejected, nothing was stored: ", stored.status().message()));
    }
    return stored.status();
  }
  return absl::OkStatus();
}

grpc::Status CasServiceImpl::Download(grpc::ServerContext* context,
                                      const farm::v1::DownloadRequest* request,
                                      grpc::ServerWriter<farm::v1::DownloadResponse>* writer) {
  return gate_->Serve(*context, "CasService.Download",
                      [&] { return SendBlob(context, *request, writer); });
}

absl::Status CasServiceImpl::SendBlob(grpc::ServerContext* context,
                                      const farm::v1::DownloadRequest& request,
                                      grpc::ServerWriter<farm::v1::DownloadResponse>* writer) {
  FARM_ASSIGN_OR_RETURN(const farm::v1::Digest digest, store_->Lookup(request.digest()));
  if (request.offset() < 0 || request.offset() > digest.size_bytes()) {
    return absl::OutOfRangeError(
        absl::StrCat("offset ", request.offset(), " is outside blob ", DigestToString(digest)));
  }
  FARM_ASSIGN_OR_RETURN(const BlobFileReader file, BlobFileReader::Open(store_, digest));
  const bool may_compress = request.accept_compression() == farm::v1::COMPRESSION_ZSTD;
  ChunkCodec codec;
  std::string packed;
  farm::v1::DownloadResponse resp;
  int64_t offset = request.offset();
  do {
    std::string* data = resp.mutable_data();
    const size_t want =
        static_cast<size_t>(std::min<int64_t>(kCasChunkBytes, digest.size_bytes() - offset));
    FARM_RETURN_IF_ERROR(file.ReadAt(offset, want, data));
    offset += static_cast<int64_t>(want);
    resp.set_compression(farm::v1::COMPRESSION_NONE);
    if (may_compress && want > 0 && codec.Compress(*data, &packed)) {
      data->swap(packed);
      resp.set_compression(farm::v1::COMPRESSION_ZSTD);
    }
    traffic_.bytes_out->Increment(static_cast<double>(data->size()));
    if (!writer->Write(resp)) {
      return absl::CancelledError(context->IsCancelled() ? "the client cancelled the download"
                                                         : "the client went away");
    }
  } while (offset < digest.size_bytes());
  return absl::OkStatus();
}

}  // namespace farm::coordinator
