#include "coordinator/admin/backup_restore.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "coordinator/data_dir.h"
#include "libfarm/digest/digest.h"
#include "libfarm/files/file_contents.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

absl::Status Refuse(const std::string& backup_dir, const std::string& why) {
  return absl::DataLossError(absl::StrCat("the backup in ", backup_dir, " ", why,
                                          ". Nothing was restored. Fix: make the backup again "
                                          "with 'farmctl admin backup DIR'"));
}

bool HasFiles(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && !fs::is_empty(dir, ec);
}

}  // namespace

absl::StatusOr<BackupManifest> RestoreBackup(const std::string& backup_dir,
                                             const std::string& data_dir) {
  const fs::path from(backup_dir), to(data_dir);
  auto text = ReadFileContents((from / kBackupManifest).string());
  if (!text.ok()) return Refuse(backup_dir, absl::StrCat("has no ", kBackupManifest));
  auto manifest = ParseBackupManifest(*text);
  if (!manifest.ok()) return Refuse(backup_dir, std::string(manifest.status().message()));

  const fs::path state = StateDir(data_dir), blobs = to / "cas" / "blobs";
  if (HasFiles(state) || HasFiles(blobs)) {
    return absl::FailedPreconditionError(
        absl::StrCat(data_dir,
                     " already holds farm state. Nothing was restored. Fix: stop its coordinator "
                     "and move ",
                     data_dir, " aside (or pass another --data-dir), then restore again"));
  }

  // Everything checked before anything is written.
  uint64_t files = 0, bytes = 0, blob_count = 0;
  std::vector<std::string> paths;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(from, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory()) continue;
    const std::string rel = fs::relative(it->path(), from).string();
    if (rel == kBackupManifest) continue;
    if (!it->is_regular_file() || !ValidateBackupPath(rel).ok()) {
      return Refuse(backup_dir, absl::StrCat("holds '", rel, "', which no backup has"));
    }
    if (absl::StartsWith(rel, "cas/")) {
      auto digest = DigestOfFile(it->path().string());
      if (!digest.ok() || digest->hash() != it->path().filename().string()) {
        return Refuse(backup_dir, absl::StrCat("holds a damaged blob: ", rel));
      }
      ++blob_count;
    }
    ++files;
    bytes += it->file_size();
    paths.push_back(rel);
  }
  if (ec) return Refuse(backup_dir, absl::StrCat("cannot be read: ", ec.message()));
  if (files != manifest->files || bytes != manifest->bytes || blob_count != manifest->blobs) {
    return Refuse(backup_dir,
                  absl::StrCat("is incomplete: ", files, " files, ", bytes, " bytes, ", blob_count,
                               " blobs where ", kBackupManifest, " says ", manifest->files, ", ",
                               manifest->bytes, ", ", manifest->blobs));
  }

  // Copied beside the data dir's own, then moved into place.
  const fs::path staging = to / ".restoring";
  fs::remove_all(staging, ec);
  for (const std::string& rel : paths) {
    fs::create_directories((staging / rel).parent_path(), ec);
    if (!ec) fs::copy_file(from / rel, staging / rel, ec);
    if (ec) {
      fs::remove_all(staging, ec);
      return absl::InternalError(absl::StrCat("cannot copy ", (from / rel).string(), " into ",
                                              data_dir, ": ", ec.message(),
                                              ". Nothing was restored. Fix: free space there"));
    }
  }
  fs::create_directories(to / "cas", ec);
  fs::create_directories(staging / "state", ec);
  fs::create_directories(staging / "cas" / "blobs", ec);
  fs::remove(state, ec);  // empty, if there at all
  fs::remove(blobs, ec);
  fs::rename(staging / "state", state, ec);
  if (!ec) fs::rename(staging / "cas" / "blobs", blobs, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot move the restored files into ", data_dir, ": ", ec.message()));
  }
  fs::remove_all(staging, ec);
  return manifest;
}

}  // namespace farm::coordinator
