#include "coordinator/reapi/content_addressable_storage_service.h"

#include <algorithm>
#include <deque>
#include <unordered_set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "coordinator/reapi/capabilities_service.h"
#include "coordinator/reapi/request_checks.h"
#include "libfarm/digest/digest.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator::reapi {
namespace {

void SetStatus(const absl::Status& status, google::rpc::Status* out) {
  out->set_code(static_cast<int>(status.code()));
  out->set_message(std::string(status.message()));
}

// GetTree's pages: at most this many directories (unless the client asks for fewer) and this
// many bytes of them, so each stays well under a client's 4 MiB message limit.
constexpr int kTreePageDirectories = 1000;
constexpr size_t kTreePageBytes = 2 << 20;
// Directories one GetTree walks at most, which bounds the memory of its walk.
constexpr size_t kMaxTreeDirectories = 1000000;

// The batch limit GetCapabilities advertises, on the blob bytes a call names.
absl::Status CheckBatchSize(int blobs, int64_t bytes, absl::string_view method) {
  if (blobs <= kMaxBatchBlobs && bytes <= MaxBatchTotalSizeBytes()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      method, " names ", blobs, " blobs of ", bytes, " bytes in all; this farm takes at most ",
      kMaxBatchBlobs, " blobs and ", MaxBatchTotalSizeBytes(),
      " bytes a call (max_batch_total_size_bytes in GetCapabilities). Fix: split the batch, or "
      "send larger blobs through ByteStream"));
}

}  // namespace

ContentAddressableStorageService::ContentAddressableStorageService(const RpcGate* gate,
                                                                   BlobStore* store,
                                                                   MetricsRegistry* metrics)
    : gate_(gate), store_(store), traffic_(CasTraffic::In(metrics)) {}

grpc::Status ContentAddressableStorageService::FindMissingBlobs(
    grpc::ServerContext* context, const rev2::FindMissingBlobsRequest* request,
    rev2::FindMissingBlobsResponse* response) {
  return gate_->Serve(*context, "ContentAddressableStorage.FindMissingBlobs", [&] {
    FARM_RETURN_IF_ERROR(CheckInstanceName(request->instance_name()));
    FARM_RETURN_IF_ERROR(CheckDigestFunction(request->digest_function()));
    for (const rev2::Digest& d : request->blob_digests()) {
      FARM_ASSIGN_OR_RETURN(const farm::v1::Digest digest, ToFarmDigest(d));
      if (IsEmptyBlob(digest)) continue;
      if (store_->Contains(digest)) {
        // Asked about now, used soon: it moves to the front of the eviction order.
        store_->Touch(digest.hash());
      } else {
        *response->add_missing_blob_digests() = d;
      }
    }
    return absl::OkStatus();
  });
}

absl::Status ContentAddressableStorageService::StoreBlob(const rev2::Digest& d,
                                                         const std::string& data) {
  FARM_ASSIGN_OR_RETURN(const farm::v1::Digest digest, ToFarmDigest(d));
  if (static_cast<int64_t>(data.size()) != digest.size_bytes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("blob ", DigestToString(digest), " carries ", data.size(),
                     " bytes, not the digest's size; nothing was stored"));
  }
  if (IsEmptyBlob(digest) || store_->Contains(digest)) {
    if (!IsEmptyBlob(digest)) store_->Touch(digest.hash());
    return absl::OkStatus();
  }
  FARM_ASSIGN_OR_RETURN(VerifiedFileWriter writer, store_->BeginWrite(digest.size_bytes()));
  FARM_RETURN_IF_ERROR(writer.Append(data));
  absl::StatusOr<farm::v1::Digest> stored = store_->Commit(std::move(writer), digest);
  if (!stored.ok() && stored.status().code() == absl::StatusCode::kInvalidArgument) {
    return absl::InvalidArgumentError(
        absl::StrCat("upload rejected, nothing was stored: ", stored.status().message()));
  }
  return stored.status();
}

grpc::Status ContentAddressableStorageService::BatchUpdateBlobs(
    grpc::ServerContext* context, const rev2::BatchUpdateBlobsRequest* request,
    rev2::BatchUpdateBlobsResponse* response) {
  return gate_->Serve(*context, "ContentAddressableStorage.BatchUpdateBlobs", [&] {
    FARM_RETURN_IF_ERROR(CheckInstanceName(request->instance_name()));
    FARM_RETURN_IF_ERROR(CheckDigestFunction(request->digest_function()));
    int64_t bytes = 0;
    for (const auto& r : request->requests()) bytes += static_cast<int64_t>(r.data().size());
    FARM_RETURN_IF_ERROR(CheckBatchSize(request->requests_size(), bytes, "BatchUpdateBlobs"));
    for (const auto& r : request->requests()) {
      traffic_.bytes_in->Increment(static_cast<double>(r.data().size()));
      auto* out = response->add_responses();
      *out->mutable_digest() = r.digest();
      absl::Status s = r.compressor() == rev2::Compressor::IDENTITY
                           ? StoreBlob(r.digest(), r.data())
                           : absl::InvalidArgumentError(
                                 "compressed blob refused: this farm advertises no compressor (see "
                                 "GetCapabilities). Fix: send the blob uncompressed (IDENTITY)");
      if (!s.ok()) {
        ComponentLogger("coordinator")
            ->warn("REAPI BatchUpdateBlobs from {}: blob {}/{} refused: {}", context->peer(),
                   r.digest().hash().substr(0, 80), r.digest().size_bytes(), s.message());
      }
      SetStatus(s, out->mutable_status());
    }
    return absl::OkStatus();
  });
}

grpc::Status ContentAddressableStorageService::BatchReadBlobs(
    grpc::ServerContext* context, const rev2::BatchReadBlobsRequest* request,
    rev2::BatchReadBlobsResponse* response) {
  return gate_->Serve(*context, "ContentAddressableStorage.BatchReadBlobs", [&] {
    FARM_RETURN_IF_ERROR(CheckInstanceName(request->instance_name()));
    FARM_RETURN_IF_ERROR(CheckDigestFunction(request->digest_function()));
    // acceptable_compressors: identity is always acceptable, and the farm offers no other.
    int64_t bytes = 0;
    for (const rev2::Digest& d : request->digests()) bytes += std::max<int64_t>(d.size_bytes(), 0);
    FARM_RETURN_IF_ERROR(CheckBatchSize(request->digests_size(), bytes, "BatchReadBlobs"));
    for (const rev2::Digest& d : request->digests()) {
      auto* out = response->add_responses();
      *out->mutable_digest() = d;
      out->set_compressor(rev2::Compressor::IDENTITY);
      absl::StatusOr<farm::v1::Digest> digest = ToFarmDigest(d);
      absl::Status s = digest.status();
      if (digest.ok() && !IsEmptyBlob(*digest)) {
        absl::StatusOr<std::string> data = store_->Read(*digest, MaxBatchTotalSizeBytes());
        if (data.ok()) {
          traffic_.bytes_out->Increment(static_cast<double>(data->size()));
          out->set_data(*std::move(data));
        } else if (data.status().code() == absl::StatusCode::kNotFound) {
          s = absl::NotFoundError(
              absl::StrCat("blob ", DigestToString(*digest), " is not in the CAS"));
        } else {
          s = data.status();
        }
      }
      SetStatus(s, out->mutable_status());
    }
    return absl::OkStatus();
  });
}

grpc::Status ContentAddressableStorageService::GetTree(
    grpc::ServerContext* context, const rev2::GetTreeRequest* request,
    grpc::ServerWriter<rev2::GetTreeResponse>* writer) {
  return gate_->Serve(*context, "ContentAddressableStorage.GetTree",
                      [&] { return SendTree(context, *request, writer); });
}

absl::Status ContentAddressableStorageService::SendTree(
    grpc::ServerContext* context, const rev2::GetTreeRequest& request,
    grpc::ServerWriter<rev2::GetTreeResponse>* writer) {
  FARM_RETURN_IF_ERROR(CheckInstanceName(request.instance_name()));
  FARM_RETURN_IF_ERROR(CheckDigestFunction(request.digest_function()));
  FARM_ASSIGN_OR_RETURN(const farm::v1::Digest root, ToFarmDigest(request.root_digest()));
  // A page token is how many directories of the walk were sent: the walk is breadth first in
  // the order each Directory lists its children, so it is the same for the same root.
  int64_t skip = 0;
  if (!request.page_token().empty() &&
      (!absl::SimpleAtoi(request.page_token(), &skip) || skip < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_token '", request.page_token().substr(0, 40),
                     "' is not one this farm handed out. Fix: pass a next_page_token of an "
                     "earlier GetTree of the same root, or none"));
  }
  const int page_size = request.page_size() > 0 ? std::min(request.page_size(), kMaxBatchBlobs)
                                                : kTreePageDirectories;
  std::deque<farm::v1::Digest> queue = {root};
  std::unordered_set<std::string> seen = {root.hash()};
  int64_t index = 0;
  rev2::GetTreeResponse page;
  size_t page_bytes = 0;
  auto send = [&](std::string next_token) -> absl::Status {
    page.set_next_page_token(std::move(next_token));
    if (!writer->Write(page)) {
      return absl::CancelledError(context->IsCancelled() ? "the client cancelled GetTree"
                                                         : "the client went away");
    }
    page.Clear();
    page_bytes = 0;
    return absl::OkStatus();
  };
  while (!queue.empty()) {
    const farm::v1::Digest digest = queue.front();
    queue.pop_front();
    absl::StatusOr<std::string> bytes =
        IsEmptyBlob(digest) ? std::string() : store_->Read(digest, MaxBatchTotalSizeBytes());
    if (!bytes.ok() && bytes.status().code() == absl::StatusCode::kNotFound) {
      if (index == 0) {
        return absl::NotFoundError(
            absl::StrCat("tree root ", DigestToString(digest), " is not in the CAS"));
      }
      continue;  // the spec's partial tree: what is present, without the missing subtree
    }
    FARM_RETURN_IF_ERROR(bytes.status());
    rev2::Directory directory;
    if (!directory.ParseFromString(*bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat("blob ", DigestToString(digest), " of the tree is not a Directory message"));
    }
    for (const rev2::DirectoryNode& child : directory.directories()) {
      FARM_ASSIGN_OR_RETURN(const farm::v1::Digest child_digest, ToFarmDigest(child.digest()));
      if (seen.size() >= kMaxTreeDirectories) {
        return absl::ResourceExhaustedError(
            absl::StrCat("tree ", DigestToString(root), " holds more than ", kMaxTreeDirectories,
                         " directories, more than this farm walks in one GetTree"));
      }
      if (seen.insert(child_digest.hash()).second) queue.push_back(child_digest);
    }
    if (index++ < skip) continue;
    if (page.directories_size() > 0 &&
        (page.directories_size() >= page_size || page_bytes + bytes->size() > kTreePageBytes)) {
      FARM_RETURN_IF_ERROR(send(absl::StrCat(index - 1)));
    }
    traffic_.bytes_out->Increment(static_cast<double>(bytes->size()));
    page_bytes += bytes->size();
    *page.add_directories() = std::move(directory);
  }
  return send("");
}

}  // namespace farm::coordinator::reapi
