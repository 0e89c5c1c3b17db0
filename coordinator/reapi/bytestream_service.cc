#include "coordinator/reapi/bytestream_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "coordinator/cas/blob_file_reader.h"
#include "coordinator/reapi/request_checks.h"
#include "coordinator/reapi/resource_name.h"
#include "libfarm/cas/cas_limits.h"
#include "libfarm/digest/digest.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator::reapi {

namespace bs = ::google::bytestream;

ByteStreamService::ByteStreamService(const RpcGate* gate, BlobStore* store,
                                     MetricsRegistry* metrics)
    : gate_(gate), store_(store), traffic_(CasTraffic::In(metrics)) {}

grpc::Status ByteStreamService::Read(grpc::ServerContext* context, const bs::ReadRequest* request,
                                     grpc::ServerWriter<bs::ReadResponse>* writer) {
  return gate_->Serve(*context, "ByteStream.Read",
                      [&] { return SendBlob(context, *request, writer); });
}

absl::Status ByteStreamService::SendBlob(grpc::ServerContext* context,
                                         const bs::ReadRequest& request,
                                         grpc::ServerWriter<bs::ReadResponse>* writer) {
  FARM_ASSIGN_OR_RETURN(const BlobResource blob, ParseReadResourceName(request.resource_name()));
  const farm::v1::Digest& digest = blob.digest;
  if (request.read_offset() < 0 || request.read_offset() > digest.size_bytes()) {
    return absl::OutOfRangeError(absl::StrCat("read_offset ", request.read_offset(),
                                              " is outside blob ", DigestToString(digest)));
  }
  if (request.read_limit() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("read_limit ", request.read_limit(), " is negative. Fix: 0 reads to the end"));
  }
  if (IsEmptyBlob(digest)) return absl::OkStatus();
  if (!store_->Contains(digest)) {
    return absl::NotFoundError(absl::StrCat("blob ", DigestToString(digest), " is not in the CAS"));
  }
  FARM_ASSIGN_OR_RETURN(const BlobFileReader file, BlobFileReader::Open(store_, digest));
  int64_t offset = request.read_offset();
  const int64_t end = request.read_limit() == 0
                          ? digest.size_bytes()
                          : std::min(digest.size_bytes(), offset + request.read_limit());
  bs::ReadResponse resp;
  while (offset < end) {
    std::string* data = resp.mutable_data();
    const size_t want = static_cast<size_t>(std::min<int64_t>(kCasChunkBytes, end - offset));
    FARM_RETURN_IF_ERROR(file.ReadAt(offset, want, data));
    offset += static_cast<int64_t>(want);
    traffic_.bytes_out->Increment(static_cast<double>(want));
    if (!writer->Write(resp)) {
      return absl::CancelledError(context->IsCancelled() ? "the client cancelled the read"
                                                         : "the client went away");
    }
  }
  return absl::OkStatus();
}

grpc::Status ByteStreamService::Write(grpc::ServerContext* context,
                                      grpc::ServerReader<bs::WriteRequest>* reader,
                                      bs::WriteResponse* response) {
  return gate_->Serve(*context, "ByteStream.Write",
                      [&] { return ReceiveBlob(context, reader, response); });
}

absl::Status ByteStreamService::ReceiveBlob(grpc::ServerContext* context,
                                            grpc::ServerReader<bs::WriteRequest>* reader,
                                            bs::WriteResponse* response) {
  bs::WriteRequest req;
  if (!reader->Read(&req)) {
    return absl::InvalidArgumentError(
        "empty Write: the first message must carry the resource name");
  }
  const std::string name = req.resource_name();
  FARM_ASSIGN_OR_RETURN(const BlobResource blob, ParseWriteResourceName(name));
  const farm::v1::Digest& digest = blob.digest;
  if (IsEmptyBlob(digest) || store_->Contains(digest)) {
    // Returning now ends the stream early, as the spec lets a server do for a blob it has.
    if (!IsEmptyBlob(digest)) store_->Touch(digest.hash());
    response->set_committed_size(digest.size_bytes());
    return absl::OkStatus();
  }
  FARM_ASSIGN_OR_RETURN(VerifiedFileWriter writer, store_->BeginWrite(digest.size_bytes()));
  bool finished = false;
  do {
    if (finished) {
      return absl::InvalidArgumentError(
          "a WriteRequest came after finish_write; nothing was stored");
    }
    if (!req.resource_name().empty() && req.resource_name() != name) {
      return absl::InvalidArgumentError(
          "a WriteRequest names another resource than the stream's first; nothing was stored");
    }
    if (req.write_offset() != writer.bytes_written()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "write_offset ", req.write_offset(), " where ", writer.bytes_written(),
          " bytes were received: this farm keeps no partial uploads; nothing was stored. Fix: "
          "write the blob again from offset 0"));
    }
    traffic_.bytes_in->Increment(static_cast<double>(req.data().size()));
    // Refused as soon as the stream outgrows its claim, so a lying client cannot fill the disk.
    if (writer.bytes_written() + static_cast<int64_t>(req.data().size()) > digest.size_bytes()) {
      return absl::InvalidArgumentError(absl::StrCat("upload rejected: more bytes than its digest ",
                                                     DigestToString(digest),
                                                     " claims; nothing was stored"));
    }
    FARM_RETURN_IF_ERROR(writer.Append(req.data()));
    finished = req.finish_write();
  } while (reader->Read(&req));
  if (context->IsCancelled()) return absl::CancelledError("the client cancelled the upload");
  if (!finished) {
    return absl::InvalidArgumentError(
        "the Write stream ended without finish_write; nothing was stored. Fix: set "
        "finish_write on the last WriteRequest");
  }
  absl::StatusOr<farm::v1::Digest> stored = store_->Commit(std::move(writer), digest);
  if (!stored.ok()) {
    if (stored.status().code() == absl::StatusCode::kInvalidArgument) {
      ComponentLogger("coordinator")
          ->warn("REAPI ByteStream upload from {} rejected: {}", context->peer(),
                 stored.status().message());
      return absl::InvalidArgumentError(
          absl::StrCat("upload rejected, nothing was stored: ", stored.status().message()));
    }
    return stored.status();
  }
  response->set_committed_size(digest.size_bytes());
  return absl::OkStatus();
}

grpc::Status ByteStreamService::QueryWriteStatus(grpc::ServerContext* context,
                                                 const bs::QueryWriteStatusRequest* request,
                                                 bs::QueryWriteStatusResponse* response) {
  return gate_->Serve(*context, "ByteStream.QueryWriteStatus", [&] {
    FARM_ASSIGN_OR_RETURN(const BlobResource blob,
                          ParseWriteResourceName(request->resource_name()));
    // No partial upload is kept: a blob is either complete or not started.
    const bool complete = IsEmptyBlob(blob.digest) || store_->Contains(blob.digest);
    response->set_complete(complete);
    response->set_committed_size(complete ? blob.digest.size_bytes() : 0);
    return absl::OkStatus();
  });
}

}  // namespace farm::coordinator::reapi
