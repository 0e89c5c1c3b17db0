// Uploads wheels to any PyPI-compatible repository (pypiserver, devpi, Artifactory,
// CodeArtifact, Warehouse, the farm's own index) through the legacy upload API that twine
// speaks: one multipart/form-data POST per file, HTTP Basic auth, http or https.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libfarm/publish/http_url.h"
#include "libfarm/publish/publisher.h"

namespace farm {

struct LegacyUploadOptions {
  std::string url;       // the upload endpoint, e.g. https://upload.pypi.org/legacy/
  std::string username;  // "__token__" for API tokens; empty with an empty password: no auth
  std::string password;
  // A 409, or a 400 saying "already exist", counts as success (twine --skip-existing).
  bool skip_existing = false;
  std::string ca_cert_file;  // https: extra CA bundle (default: the system's)
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration io_timeout = absl::Minutes(5);  // per read or write, not for the whole upload
};

class LegacyUploadClient : public Publisher {
 public:
  static absl::StatusOr<std::unique_ptr<LegacyUploadClient>> Create(LegacyUploadOptions options);

  std::string Describe() const override { return url_.ToString(); }
  // Reads the wheel's METADATA (libfarm/publish/wheel_package.h), hashes it, and posts it.
  // Status codes: UNAUTHENTICATED (401/403), FAILED_PRECONDITION (file already exists),
  // INVALID_ARGUMENT (other 4xx, with the server's reason), UNAVAILABLE (connection
  // failures and 5xx: retry later).
  absl::StatusOr<PublishResult> Publish(const std::string& wheel_path) override;

 private:
  LegacyUploadClient(LegacyUploadOptions options, HttpUrl url)
      : options_(std::move(options)), url_(std::move(url)) {}

  LegacyUploadOptions options_;
  HttpUrl url_;
};

}  // namespace farm
