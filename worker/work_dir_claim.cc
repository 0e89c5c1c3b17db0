#include "worker/work_dir_claim.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "libfarm/files/file_contents.h"

namespace farm::worker {
namespace {

constexpr size_t kInstanceIdBytes = 16;

bool IsInstanceId(const std::string& s) {
  return s.size() == 2 * kInstanceIdBytes &&
         std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isxdigit(c); });
}

absl::StatusOr<std::string> ReadOrMakeInstanceId(const std::string& work_dir) {
  const std::string path = work_dir + "/instance-id";
  if (auto text = ReadFileContents(path); text.ok()) {
    std::string id(absl::StripAsciiWhitespace(*text));
    if (IsInstanceId(id)) return id;
  }
  unsigned char raw[kInstanceIdBytes];
  if (getrandom(raw, sizeof(raw), 0) != static_cast<ssize_t>(sizeof(raw))) {
    return absl::InternalError(absl::StrCat("getrandom failed: ", std::strerror(errno)));
  }
  const std::string id =
      absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(raw), sizeof(raw)));
  if (absl::Status s = WriteFileAtomically(path, id + "\n"); !s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(s.message(), ". Fix: pass --work-dir with a writable directory"));
  }
  return id;
}

}  // namespace

absl::StatusOr<WorkDirClaim> ClaimWorkDir(const std::string& work_dir) {
  auto lock = FileLock::TryAcquire(work_dir + "/worker.lock");
  if (!lock.ok()) {
    if (lock.status().code() != absl::StatusCode::kUnavailable) return lock.status();
    return absl::FailedPreconditionError(absl::StrCat(
        "work dir ", work_dir,
        " is in use by another farm-worker on this host. Fix: stop that worker, or give each "
        "worker its own --work-dir (and --name)"));
  }
  auto id = ReadOrMakeInstanceId(work_dir);
  if (!id.ok()) return id.status();
  return WorkDirClaim{std::move(*lock), *id};
}

}  // namespace farm::worker
