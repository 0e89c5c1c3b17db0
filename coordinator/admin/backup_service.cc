#include "coordinator/admin/backup_service.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libfarm/backup/backup_layout.h"
#include "libfarm/cas/cas_limits.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

}  // namespace

BackupServiceImpl::BackupServiceImpl(const RpcGate* gate, const StateStore* state, BlobStore* blobs,
                                     std::string scratch_dir)
    : gate_(gate), state_(state), blobs_(blobs), scratch_dir_(std::move(scratch_dir)) {
  // Checkpoints a crash left behind: no stream is reading them any more.
  std::error_code ec;
  fs::remove_all(scratch_dir_, ec);
}

grpc::Status BackupServiceImpl::Backup(grpc::ServerContext* context,
                                       const farm::v1::BackupRequest* /*request*/,
                                       grpc::ServerWriter<farm::v1::BackupChunk>* writer) {
  return gate_->Serve(*context, "AdminService.Backup", [&] { return Stream(context, writer); });
}

absl::Status BackupServiceImpl::Stream(grpc::ServerContext* context,
                                       grpc::ServerWriter<farm::v1::BackupChunk>* writer) {
  auto log = ComponentLogger("coordinator");
  const absl::Time started = absl::Now();
  const std::string id = absl::StrCat("backup-", absl::ToUnixNanos(started));
  const fs::path checkpoint = fs::path(scratch_dir_) / id;
  std::error_code ec;
  fs::create_directories(scratch_dir_, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create ", scratch_dir_, ": ", ec.message()));
  }
  absl::Cleanup cleanup = [&] {
    std::error_code ignored;
    fs::remove_all(checkpoint, ignored);
    blobs_->Unpin(id);
  };
  FARM_ASSIGN_OR_RETURN(
      auto blobs, blobs_->PinAllWhile(id, [&] { return state_->Checkpoint(checkpoint.string()); }));

  BackupManifest manifest{
      .version = FARM_VERSION,
      .created_at = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", started, absl::UTCTimeZone()),
      .blobs = blobs.size()};
  std::string buffer(kCasChunkBytes, '\0');
  auto send = [&](const std::string& file, const std::string& path) -> absl::Status {
    std::ifstream in(file, std::ios::binary);
    const auto size = fs::file_size(file, ec);
    if (!in || ec) return absl::InternalError(absl::StrCat("cannot read ", file));
    farm::v1::BackupChunk chunk;
    chunk.set_path(path);
    chunk.set_size_bytes(static_cast<int64_t>(size));
    uint64_t sent = 0;
    do {
      in.read(buffer.data(),
              static_cast<std::streamsize>(std::min<uint64_t>(buffer.size(), size - sent)));
      chunk.set_data(buffer.data(), static_cast<size_t>(in.gcount()));
      sent += static_cast<uint64_t>(in.gcount());
      if (context->IsCancelled() || !writer->Write(chunk)) {
        return absl::CancelledError("the backup's receiver went away");
      }
      chunk.Clear();
    } while (sent < size && in);
    if (sent != size) return absl::InternalError(absl::StrCat(file, " changed while sent"));
    ++manifest.files;
    manifest.bytes += size;
    return absl::OkStatus();
  };

  std::vector<fs::path> state_files;
  for (const auto& entry : fs::directory_iterator(checkpoint, ec)) {
    if (entry.is_regular_file()) state_files.push_back(entry.path());
  }
  std::sort(state_files.begin(), state_files.end());
  for (const fs::path& f : state_files) {
    FARM_RETURN_IF_ERROR(send(f.string(), "state/" + f.filename().string()));
  }
  for (const auto& [digest, file] : blobs) {
    FARM_RETURN_IF_ERROR(send(file, BackupBlobPath(digest.hash())));
  }
  farm::v1::BackupChunk last;
  last.set_path(kBackupManifest);
  last.set_data(BackupManifestToJson(manifest));
  last.set_size_bytes(static_cast<int64_t>(last.data().size()));
  if (!writer->Write(last)) return absl::CancelledError("the backup's receiver went away");
  log->info("backup: sent {} files ({} bytes, {} blobs) in {}", manifest.files, manifest.bytes,
            manifest.blobs, absl::FormatDuration(absl::Now() - started));
  return absl::OkStatus();
}

}  // namespace farm::coordinator
