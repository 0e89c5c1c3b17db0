// farmctl admin backup: writes the coordinator's backup stream into a directory. The stream
// is hostile until checked: only a backup's own paths, each file exactly its declared size,
// the manifest last and matching what came. The directory appears only when all of it did.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "farm/v1/admin_service.pb.h"
#include "libfarm/backup/backup_layout.h"

namespace farm::cli {

class BackupReceiver {
 public:
  // `dir` must not exist yet (or be empty); the stream goes to "<dir>.partial" first.
  static absl::StatusOr<std::unique_ptr<BackupReceiver>> Begin(const std::string& dir);
  BackupReceiver(const BackupReceiver&) = delete;
  BackupReceiver& operator=(const BackupReceiver&) = delete;
  // Removes what came unless Finish succeeded.
  ~BackupReceiver();

  absl::Status Take(const farm::v1::BackupChunk& chunk);
  // Checks the manifest against what came and moves the backup to `dir`.
  absl::StatusOr<BackupManifest> Finish();

 private:
  explicit BackupReceiver(std::string dir);
  absl::Status CloseFile();

  std::string dir_, partial_;
  bool finished_ = false;
  std::ofstream out_;
  std::string path_;  // the file being received
  uint64_t size_ = 0, received_ = 0;
  std::set<std::string> seen_;
  uint64_t files_ = 0, bytes_ = 0, blobs_ = 0;
  std::string manifest_text_;
  bool in_manifest_ = false;
  std::optional<BackupManifest> manifest_;
};

}  // namespace farm::cli
