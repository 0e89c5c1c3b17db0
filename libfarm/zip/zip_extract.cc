#include "libfarm/zip/zip_extract.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/zip/zip_archive.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

absl::Status WriteNewFile(const fs::path& path, ByteSpan bytes) {
  // O_EXCL and O_NOFOLLOW: never overwrite, never write through a link.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", path.string(), ": ", std::strerror(errno)));
  }
  absl::Cleanup close_fd = [fd] { ::close(fd); };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InternalError(
          absl::StrCat("cannot write ", path.string(), ": ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExtractZipFolder(const std::string& zip_path,
                                                          const std::string& prefix,
                                                          const std::string& dest,
                                                          const ZipExtractLimits& limits) {
  auto mapped = MappedFile::Open(zip_path, MappedFile::Access::kSequential);
  if (!mapped.ok()) return mapped.status();
  auto zip = ZipArchive::Open(mapped->bytes());
  if (!zip.ok()) {
    return absl::DataLossError(absl::StrCat(zip_path, ": ", zip.status().message()));
  }
  auto refuse = [&](const ZipEntry& e, absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(zip_path, ": member \"", e.name, "\" ", why));
  };

  // Check everything first: a refused archive leaves nothing behind.
  std::vector<const ZipEntry*> selected;
  uint64_t total = 0;
  for (const ZipEntry& e : zip->entries()) {
    if (!absl::StartsWith(e.name, prefix)) continue;
    if (absl::Status s = CheckMemberPath(e.name); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(zip_path, ": ", s.message()));
    }
    if (e.name.size() == prefix.size()) continue;  // the folder itself
    if (e.IsSymlink()) return refuse(e, "is a symlink");
    if (e.IsEncrypted()) return refuse(e, "is encrypted");
    if (e.uncompressed_size > limits.max_member_bytes) {
      return refuse(e, absl::StrCat("is ", e.uncompressed_size, " bytes, over the limit of ",
                                    limits.max_member_bytes));
    }
    total += e.uncompressed_size;
    if (total > limits.max_total_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          zip_path, ": members under \"", prefix, "\" exceed ", limits.max_total_bytes, " bytes"));
    }
    selected.push_back(&e);
    if (selected.size() > limits.max_members) {
      return absl::InvalidArgumentError(
          absl::StrCat(zip_path, ": more than ", limits.max_members, " members"));
    }
  }

  std::vector<std::string> written;
  for (const ZipEntry* e : selected) {
    const std::string relative = e->name.substr(prefix.size());
    const fs::path target = fs::path(dest) / relative;
    std::error_code ec;
    fs::create_directories(e->IsDirectory() ? target : target.parent_path(), ec);
    if (ec) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create ", target.parent_path().string(), ": ", ec.message()));
    }
    if (e->IsDirectory()) continue;
    auto data = zip->Read(*e, limits.max_member_bytes);
    if (!data.ok()) {
      return absl::DataLossError(
          absl::StrCat(zip_path, ": member \"", e->name, "\": ", data.status().message()));
    }
    if (absl::Status s = WriteNewFile(target, data->bytes()); !s.ok()) return s;
    written.push_back(relative);
  }
  return written;
}

}  // namespace farm
