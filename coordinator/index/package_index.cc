#include "coordinator/index/package_index.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "coordinator/index/release_file_key.h"
#include "libfarm/cuda/arch_set_label.h"
#include "libfarm/digest/digest.h"
#include "libfarm/logging/logger.h"
#include "libfarm/publish/core_metadata.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {
namespace {

constexpr char kOwnerPrefix[] = "package:";
constexpr size_t kCopyChunk = 1 << 20;

std::string RecordKey(const std::string& project, const std::string& filename) {
  return absl::StrCat(project, "/", filename);
}

// The release file key of a record's file name; records from before keys were compared
// whose name no longer parses fall back to the name itself, so they still load.
std::string KeyOfRecord(const farm::v1::PackageFile& file) {
  auto parsed = ParseWheelFilename(file.filename());
  if (!parsed.ok()) return file.filename();
  auto key = ReleaseFileKey(*parsed);
  return key.ok() ? *key : file.filename();
}

// Of two records with one key, the one published first keeps the name (ties: by name).
bool PublishedBefore(const farm::v1::PackageFile& a, const farm::v1::PackageFile& b) {
  if (a.uploaded_at().seconds() != b.uploaded_at().seconds()) {
    return a.uploaded_at().seconds() < b.uploaded_at().seconds();
  }
  if (a.uploaded_at().nanos() != b.uploaded_at().nanos()) {
    return a.uploaded_at().nanos() < b.uploaded_at().nanos();
  }
  return a.filename() < b.filename();
}

// The arch set a file's name labels it with ("sm75-sm90"); "" when none.
std::string ArchSetOf(const farm::v1::PackageFile& file) {
  auto parsed = ParseWheelFilename(file.filename());
  if (!parsed.ok()) return "";
  return ArchSetNameOfVersion(parsed->version).value_or("");
}

farm::v1::Digest MakeDigest(const std::string& hash, int64_t size) {
  farm::v1::Digest d;
  d.set_hash(hash);
  d.set_size_bytes(size);
  return d;
}

}  // namespace

std::string PercentEncode(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xf]);
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<PackageIndex>> PackageIndex::Open(StateStore* state,
                                                                 BlobStore* blobs) {
  std::unique_ptr<PackageIndex> index(new PackageIndex(state, blobs));
  FARM_RETURN_IF_ERROR(index->Load());
  return index;
}

absl::Status PackageIndex::Load() {
  auto log = ComponentLogger("index");
  size_t loaded = 0;
  absl::MutexLock lock(&mu_);
  absl::Status s = state_->ForEachRecord<farm::v1::PackageFile>(
      Table::kPackages,
      [&](const std::string& key, farm::v1::PackageFile& file) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        // Pin first: nothing may evict a published wheel, even one we are about to check.
        blobs_->Pin(kOwnerPrefix + key, {file.wheel(), file.core_metadata()});
        if (!blobs_->Contains(file.wheel())) {
          log->error(
              "published wheel {} ({}) is missing from the CAS; it is not listed. Fix: "
              "publish it again",
              file.filename(), DigestToString(file.wheel()));
          return absl::OkStatus();
        }
        // Records stored before names were compared as pip compares them may shadow each
        // other ("2.0" and "2.0.0"): the first published keeps the name, the others are
        // logged and not listed (their records stay, for the operator to judge).
        auto& slot = files_[file.project()];
        const std::string file_key = KeyOfRecord(file);
        auto [it, inserted] = slot.emplace(file_key, file);
        if (!inserted) {
          const bool replaces = PublishedBefore(file, it->second);
          const farm::v1::PackageFile& hidden = replaces ? it->second : file;
          const farm::v1::PackageFile& kept = replaces ? file : it->second;
          log->error(
              "published wheel {} (sha256 {}) is the same file to pip as {}, published "
              "first; it is not listed. Fix: remove record \"{}/{}\" if it should not exist",
              hidden.filename(), hidden.wheel().hash(), kept.filename(), hidden.project(),
              hidden.filename());
          if (replaces) it->second = file;
          return absl::OkStatus();
        }
        ++loaded;
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (loaded > 0) log->info("package index: {} files in {} projects", loaded, files_.size());
  return absl::OkStatus();
}

absl::StatusOr<VerifiedFileWriter> PackageIndex::BeginUpload(int64_t size_bytes) {
  return blobs_->BeginWrite(size_bytes);
}

absl::StatusOr<PublishedFile> PackageIndex::Publish(const std::string& wheel_path) {
  const std::string filename = std::filesystem::path(wheel_path).filename().string();
  auto wheel = ReadWheelPackage(wheel_path, filename);
  if (!wheel.ok()) return wheel.status();
  auto writer = BeginUpload(static_cast<int64_t>(wheel->size_bytes));
  if (!writer.ok()) return writer.status();
  // Hash while copying into the CAS: one read of the wheel, whatever its size.
  std::ifstream in(wheel_path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", wheel_path));
  UploadHasher hasher;
  std::string buf(kCopyChunk, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const absl::string_view chunk(buf.data(), static_cast<size_t>(in.gcount()));
    hasher.Update(chunk);
    FARM_RETURN_IF_ERROR(writer->Append(chunk));
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat("error while reading ", wheel_path));
  return AddUpload(*std::move(writer), *wheel, hasher.Finish());
}

absl::StatusOr<PublishedFile> PackageIndex::AddUpload(VerifiedFileWriter writer,
                                                      const WheelPackage& wheel,
                                                      const UploadDigests& digests) {
  const int64_t size = writer.bytes_written();
  auto store = [this, &writer, &digests, size]() {
    return blobs_->Commit(std::move(writer), MakeDigest(digests.sha256_hex, size));
  };
  absl::MutexLock publish_lock(&publish_mu_);
  return Add(wheel, digests, store);
}

absl::StatusOr<PublishedFile> PackageIndex::Add(
    const WheelPackage& wheel, const UploadDigests& digests,
    const std::function<absl::StatusOr<farm::v1::Digest>()>& store) {
  const std::string project = NormalizeProjectName(wheel.metadata.name());
  auto file_key = ReleaseFileKey(wheel.parsed);
  if (!file_key.ok()) return file_key.status();
  if (auto existing = Lookup(project, *file_key)) {
    if (existing->wheel().hash() == digests.sha256_hex) return Describe(*existing, true);
    const std::string same_as =
        existing->filename() == wheel.filename
            ? std::string()
            : absl::StrCat(" (pip reads it as the published ", existing->filename(),
                           ": project names, PEP 440 versions and tags are compared "
                           "normalized)");
    return absl::AlreadyExistsError(
        absl::StrCat("File already exists: ", wheel.filename, same_as, " is published with sha256 ",
                     existing->wheel().hash(), " and these bytes have sha256 ", digests.sha256_hex,
                     ". A published file never changes. Fix: bump the version or add a build tag"));
  }
  const std::string key = RecordKey(project, wheel.filename);
  const std::string owner = kOwnerPrefix + key;
  const farm::v1::Digest metadata_digest = DigestOfBytes(wheel.metadata_text);
  blobs_->Pin(owner, {MakeDigest(digests.sha256_hex, static_cast<int64_t>(wheel.size_bytes)),
                      metadata_digest});
  auto wheel_digest = store();
  if (!wheel_digest.ok()) {
    blobs_->Unpin(owner);
    return wheel_digest.status();
  }
  auto stored_metadata = blobs_->PutBytes(wheel.metadata_text);
  if (!stored_metadata.ok()) {
    blobs_->Unpin(owner);
    return stored_metadata.status();
  }
  farm::v1::PackageFile file;
  file.set_project(project);
  file.set_display_name(wheel.metadata.name());
  file.set_version(wheel.metadata.version());
  file.set_filename(wheel.filename);
  *file.mutable_wheel() = *wheel_digest;
  *file.mutable_core_metadata() = *stored_metadata;
  file.set_requires_python(wheel.metadata.requires_python());
  const absl::Duration since_epoch = absl::Now() - absl::UnixEpoch();
  file.mutable_uploaded_at()->set_seconds(absl::ToInt64Seconds(since_epoch));
  file.mutable_uploaded_at()->set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(since_epoch % absl::Seconds(1))));
  if (absl::Status s = state_->Put(Table::kPackages, key, file); !s.ok()) {
    blobs_->Unpin(owner);
    return s;
  }
  {
    absl::MutexLock lock(&mu_);
    files_[project][*file_key] = file;
  }
  ComponentLogger("index")->info("published {} ({}, sha256 {})", wheel.filename,
                                 DigestToString(file.wheel()), file.wheel().hash());
  return Describe(file, false);
}

std::optional<farm::v1::PackageFile> PackageIndex::Lookup(const std::string& project,
                                                          const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto p = files_.find(project);
  if (p == files_.end()) return std::nullopt;
  auto f = p->second.find(key);
  if (f == p->second.end()) return std::nullopt;
  return f->second;
}

PublishedFile PackageIndex::Describe(const farm::v1::PackageFile& file, bool already_present) {
  return PublishedFile{.file = file,
                       .url = FileUrl(file),
                       .project_url = ProjectUrl(file.project()),
                       .already_present = already_present};
}

std::vector<std::string> PackageIndex::Projects(const std::string& arch_set) {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [project, files] : files_) {
    if (std::any_of(files.begin(), files.end(), [&](const auto& entry) {
          return arch_set.empty() || ArchSetOf(entry.second) == arch_set;
        })) {
      out.push_back(project);
    }
  }
  return out;
}

std::vector<farm::v1::PackageFile> PackageIndex::Files(const std::string& project,
                                                       const std::string& arch_set) {
  absl::MutexLock lock(&mu_);
  std::vector<farm::v1::PackageFile> out;
  auto p = files_.find(project);
  if (p == files_.end()) return out;
  for (const auto& [key, file] : p->second) {
    if (arch_set.empty() || ArchSetOf(file) == arch_set) out.push_back(file);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.filename() < b.filename(); });
  return out;
}

std::vector<std::string> PackageIndex::ArchSets() {
  absl::MutexLock lock(&mu_);
  std::set<std::string> sets;
  for (const auto& [project, files] : files_) {
    for (const auto& [key, file] : files) {
      if (std::string set = ArchSetOf(file); !set.empty()) sets.insert(std::move(set));
    }
  }
  return {sets.begin(), sets.end()};
}

std::optional<farm::v1::PackageFile> PackageIndex::Find(const std::string& sha256,
                                                        const std::string& filename) {
  auto parsed = CheckWheelFilename(filename);
  if (!parsed.ok()) return std::nullopt;
  auto key = ReleaseFileKey(*parsed);
  if (!key.ok()) return std::nullopt;
  auto file = Lookup(NormalizeProjectName(parsed->distribution), *key);
  // Served under its published name only: another spelling of it is not a URL we gave out.
  if (!file || file->filename() != filename || file->wheel().hash() != sha256) return std::nullopt;
  return file;
}

absl::StatusOr<std::string> PackageIndex::BlobPath(const farm::v1::Digest& digest) {
  return blobs_->PathOf(digest);
}

void PackageIndex::SetBaseUrl(const std::string& base_url) {
  absl::MutexLock lock(&mu_);
  base_url_ = base_url;
}

std::string PackageIndex::FileUrl(const farm::v1::PackageFile& file) {
  absl::MutexLock lock(&mu_);
  return absl::StrCat(base_url_, "/files/", file.wheel().hash(), "/",
                      PercentEncode(file.filename()));
}

std::string PackageIndex::ProjectUrl(const std::string& project) {
  absl::MutexLock lock(&mu_);
  return absl::StrCat(base_url_, "/simple/", project, "/");
}

}  // namespace farm::coordinator
