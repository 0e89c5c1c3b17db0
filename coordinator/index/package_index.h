// The coordinator's built-in package index: which wheels are published, by project. The
// records live in RocksDB (Table::kPackages, farm.v1.PackageFile), the bytes in the CAS,
// pinned so the LRU never evicts a published wheel; both survive restarts. The simple API
// pages (simple_pages.h) and the upload endpoint (index_routes.h) sit on top of this.
//
// Files are immutable: a file name, once published, always means the same bytes (as on
// PyPI). Publishing the same bytes again is a no-op; different bytes are refused. Names are
// compared as pip compares them (release_file_key.h), so "Probe_OK-2.0.0-PY3-none-any.whl"
// is the published "probe_ok-2.0-py3-none-any.whl" and cannot bring other bytes.
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/cas/blob_store.h"
#include "coordinator/state_store.h"
#include "farm/v1/package_index.pb.h"
#include "libfarm/cas/verified_file_writer.h"
#include "libfarm/publish/upload_digests.h"
#include "libfarm/publish/wheel_package.h"

namespace farm::coordinator {

struct PublishedFile {
  farm::v1::PackageFile file;
  std::string url;          // where pip downloads it (absolute once the HTTP address is known)
  std::string project_url;  // its /simple/<project>/ page
  bool already_present = false;
};

class PackageIndex {
 public:
  // Loads every record and pins its blobs. A record whose wheel is missing from the CAS is
  // logged and not listed (the store is never repaired behind the operator's back).
  static absl::StatusOr<std::unique_ptr<PackageIndex>> Open(StateStore* state, BlobStore* blobs);

  // For in-process callers (the submit flow): checks the wheel at `wheel_path` (name,
  // METADATA, member paths), copies it into the CAS and lists it. ALREADY_EXISTS when the
  // index holds a different file of that name.
  absl::StatusOr<PublishedFile> Publish(const std::string& wheel_path);

  // For the upload endpoint: `writer` holds the uploaded bytes (from BeginUpload), already
  // checked into `wheel` and hashed into `digests`.
  absl::StatusOr<PublishedFile> AddUpload(VerifiedFileWriter writer, const WheelPackage& wheel,
                                          const UploadDigests& digests);
  // A temp file in the CAS for an upload of at most `size_bytes` (0: unknown).
  absl::StatusOr<VerifiedFileWriter> BeginUpload(int64_t size_bytes);

  // Normalized project names with at least one file, sorted. With `arch_set` ("sm75-sm90",
  // libfarm/cuda/arch_set_label.h), only those with a file of that arch set.
  std::vector<std::string> Projects(const std::string& arch_set = "");
  // The project's files sorted by file name; empty when unknown. With `arch_set`, only the
  // files whose version carries that arch set's label ("+cu130.sm75.sm90").
  std::vector<farm::v1::PackageFile> Files(const std::string& project,
                                           const std::string& arch_set = "");
  // The arch sets of the listed files, sorted ("sm75", "sm75-sm90").
  std::vector<std::string> ArchSets();
  // The listed file with this sha256 and name, if any.
  std::optional<farm::v1::PackageFile> Find(const std::string& sha256, const std::string& filename);
  // The on-disk path of a listed blob, for serving it.
  absl::StatusOr<std::string> BlobPath(const farm::v1::Digest& digest);

  // "http://host:port", once the coordinator's HTTP server is bound; makes URLs absolute.
  void SetBaseUrl(const std::string& base_url);
  // "/files/<sha256>/<percent-encoded file name>" (absolute with a base URL).
  std::string FileUrl(const farm::v1::PackageFile& file);
  std::string ProjectUrl(const std::string& project);

 private:
  PackageIndex(StateStore* state, BlobStore* blobs) : state_(state), blobs_(blobs) {}
  absl::Status Load();
  // The listed file with that release file key (release_file_key.h), if any.
  std::optional<farm::v1::PackageFile> Lookup(const std::string& project, const std::string& key);
  absl::StatusOr<PublishedFile> Add(const WheelPackage& wheel, const UploadDigests& digests,
                                    const std::function<absl::StatusOr<farm::v1::Digest>()>& store)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(publish_mu_);
  PublishedFile Describe(const farm::v1::PackageFile& file, bool already_present);

  StateStore* const state_;
  BlobStore* const blobs_;
  // Serialises publishing, so "is the name free?" and "list it" cannot interleave.
  absl::Mutex publish_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::Mutex mu_;
  // project -> release file key -> record
  std::map<std::string, std::map<std::string, farm::v1::PackageFile>> files_ ABSL_GUARDED_BY(mu_);
  std::string base_url_ ABSL_GUARDED_BY(mu_);
};

// Percent-encodes everything but RFC 3986 unreserved characters ("+" becomes "%2B").
std::string PercentEncode(const std::string& text);

}  // namespace farm::coordinator
