#include "cli/backup_receiver.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace farm::cli {
namespace {

namespace fs = std::filesystem;

// Far above any real state file or blob, far below what would fill a disk by lying.
constexpr int64_t kMaxFileBytes = int64_t{1} << 40;
constexpr size_t kMaxManifestBytes = 64 << 10;

absl::Status Bad(const std::string& why) {
  return absl::DataLossError(absl::StrCat("the coordinator's backup stream ", why,
                                          "; nothing was kept. Fix: run the backup again; if "
                                          "it repeats, see the coordinator's log"));
}

}  // namespace

BackupReceiver::BackupReceiver(std::string dir)
    : dir_(std::move(dir)), partial_(dir_ + ".partial") {}

BackupReceiver::~BackupReceiver() {
  if (finished_) return;
  out_.close();
  std::error_code ec;
  fs::remove_all(partial_, ec);
}

absl::StatusOr<std::unique_ptr<BackupReceiver>> BackupReceiver::Begin(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec))) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, " already exists. Fix: name a new directory for the backup"));
  }
  std::unique_ptr<BackupReceiver> r(new BackupReceiver(dir));
  fs::remove_all(r->partial_, ec);
  fs::create_directories(r->partial_, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat("cannot create ", r->partial_, ": ",
                                                    ec.message(), ". Fix: choose another DIR"));
  }
  return r;
}

absl::Status BackupReceiver::CloseFile() {
  if (path_.empty()) return absl::OkStatus();
  if (received_ != size_) {
    return Bad(absl::StrCat("ended ", path_, " after ", received_, " of ", size_, " bytes"));
  }
  if (in_manifest_) {
    auto m = ParseBackupManifest(manifest_text_);
    if (!m.ok()) return Bad(std::string(m.status().message()));
    manifest_ = *m;
  } else {
    out_.close();
    if (!out_) return absl::InternalError(absl::StrCat("cannot write ", partial_, "/", path_));
    ++files_;
    bytes_ += size_;
    if (absl::StartsWith(path_, "cas/")) ++blobs_;
  }
  path_.clear();
  return absl::OkStatus();
}

absl::Status BackupReceiver::Take(const farm::v1::BackupChunk& chunk) {
  if (!chunk.path().empty()) {
    if (absl::Status s = CloseFile(); !s.ok()) return s;
    // The manifest comes last: closing it above is what sets manifest_.
    if (manifest_) return Bad(absl::StrCat("sent ", chunk.path(), " after ", kBackupManifest));
    if (absl::Status s = ValidateBackupPath(chunk.path()); !s.ok()) {
      return Bad(std::string(s.message()));
    }
    if (!seen_.insert(chunk.path()).second)
      return Bad(absl::StrCat("sent ", chunk.path(), " twice"));
    if (chunk.size_bytes() < 0 || chunk.size_bytes() > kMaxFileBytes) {
      return Bad(absl::StrCat("declared ", chunk.path(), " as ", chunk.size_bytes(), " bytes"));
    }
    path_ = chunk.path();
    size_ = static_cast<uint64_t>(chunk.size_bytes());
    received_ = 0;
    in_manifest_ = path_ == kBackupManifest;
    if (in_manifest_ && size_ > kMaxManifestBytes) {
      return Bad(absl::StrCat("declared a ", size_, "-byte ", kBackupManifest));
    }
    if (!in_manifest_) {
      const fs::path file = fs::path(partial_) / path_;
      std::error_code ec;
      fs::create_directories(file.parent_path(), ec);
      out_.open(file, std::ios::binary | std::ios::trunc);
      if (!out_) return absl::InternalError(absl::StrCat("cannot create ", file.string()));
    }
  } else if (path_.empty()) {
    return Bad("sent bytes before naming their file");
  }
  if (received_ + chunk.data().size() > size_) {
    return Bad(absl::StrCat("sent more than the ", size_, " bytes it declared for ", path_));
  }
  received_ += chunk.data().size();
  if (in_manifest_) {
    manifest_text_ += chunk.data();
  } else {
    out_.write(chunk.data().data(), static_cast<std::streamsize>(chunk.data().size()));
    if (!out_) return absl::InternalError(absl::StrCat("cannot write ", partial_, "/", path_));
  }
  return absl::OkStatus();
}

absl::StatusOr<BackupManifest> BackupReceiver::Finish() {
  if (absl::Status s = CloseFile(); !s.ok()) return s;
  if (!manifest_) return Bad(absl::StrCat("ended without ", kBackupManifest));
  if (manifest_->files != files_ || manifest_->bytes != bytes_ || manifest_->blobs != blobs_) {
    return Bad(absl::StrCat("carried ", files_, " files (", bytes_, " bytes, ", blobs_,
                            " blobs) where its manifest says ", manifest_->files, " (",
                            manifest_->bytes, " bytes, ", manifest_->blobs, " blobs)"));
  }
  {
    std::ofstream m(fs::path(partial_) / kBackupManifest, std::ios::binary | std::ios::trunc);
    m << manifest_text_;
    if (!m)
      return absl::InternalError(absl::StrCat("cannot write ", partial_, "/", kBackupManifest));
  }
  std::error_code ec;
  fs::remove(dir_, ec);  // empty, if there
  fs::rename(partial_, dir_, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot move ", partial_, " to ", dir_, ": ", ec.message()));
  }
  finished_ = true;
  return *manifest_;
}

}  // namespace farm::cli
