#include "libfarm/backup/backup_layout.h"

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/digest/digest.h"
#include "libfarm/files/relative_path.h"

namespace farm {

absl::Status ValidateBackupPath(absl::string_view path) {
  if (path == kBackupManifest) return absl::OkStatus();
  const std::vector<absl::string_view> parts = absl::StrSplit(path, '/');
  const bool relative = ValidateRelativePath(path).ok();
  if (relative && parts.size() == 2 && parts[0] == "state") return absl::OkStatus();
  if (relative && parts.size() == 4 && ValidateHash(parts[3]).ok() &&
      path == BackupBlobPath(parts[3])) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "'", path, "' is not a file of a farm backup (state/<file>, cas/blobs/<xx>/<sha256>, ",
      kBackupManifest, ")"));
}

std::string BackupBlobPath(absl::string_view hash) {
  return absl::StrCat("cas/blobs/", hash.substr(0, 2), "/", hash);
}

std::string BackupManifestToJson(const BackupManifest& m) {
  return nlohmann::json{{"format", m.format}, {"version", m.version}, {"created_at", m.created_at},
                        {"files", m.files},   {"bytes", m.bytes},     {"blobs", m.blobs}}
      .dump(2);
}

absl::StatusOr<BackupManifest> ParseBackupManifest(absl::string_view json) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object() || !j["format"].is_number_integer() || !j["files"].is_number_unsigned() ||
      !j["bytes"].is_number_unsigned() || !j["blobs"].is_number_unsigned()) {
    return absl::DataLossError(absl::StrCat(kBackupManifest, " is not a farm backup manifest"));
  }
  BackupManifest m;
  m.format = j["format"].get<int>();
  if (m.format != kBackupFormat) {
    return absl::FailedPreconditionError(
        absl::StrCat(kBackupManifest, " has format ", m.format, "; this build reads format ",
                     kBackupFormat, ". Fix: restore with the Wheelfarm version that made it"));
  }
  m.version = j.value("version", "");
  m.created_at = j.value("created_at", "");
  m.files = j["files"].get<uint64_t>();
  m.bytes = j["bytes"].get<uint64_t>();
  m.blobs = j["blobs"].get<uint64_t>();
  return m;
}

}  // namespace farm
