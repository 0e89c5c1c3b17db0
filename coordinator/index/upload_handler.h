// The legacy upload API endpoint (what `twine upload` speaks): an authenticated
// multipart/form-data POST with ":action=file_upload", the wheel in the "content" part and
// its metadata and digests as fields. The wheel streams into the CAS's temp space while it
// is hashed, so a 2 GiB upload never sits in memory; nothing is listed until every check
// has passed:
//   401  no or wrong credentials (HTTP Basic; any user name, password = the farm token),
//        answered from the headers: the body is not read and the connection is closed
//   413  larger than the upload limit
//   400  not multipart, wrong :action, no content, a bad file name (path separators, "..",
//        not a wheel), a sha256_digest/md5_digest that does not match the bytes (both
//        digests named), METADATA name/version not matching the form or the file name
//   409  "File already exists" with different bytes (twine --skip-existing skips it)
//   200  listed, or the identical file was already listed (uploads are idempotent)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "coordinator/http/http_limits.h"
#include "coordinator/index/package_index.h"
#include "libfarm/rpc/token_auth.h"

namespace httplib {
struct Request;
struct Response;
class ContentReader;
}  // namespace httplib

namespace farm::coordinator {

// Form fields other than the file (metadata, a long description) are small; this bounds
// what one request may make us hold in memory.
constexpr uint64_t kMaxUploadFieldBytes = 8 << 20;
// What an upload request's body may hold beyond the file: those fields and the multipart
// framing. The HTTP port refuses a larger body before reading it (http_limits.h).
constexpr uint64_t kMaxUploadFormOverhead = kMaxUploadFieldBytes + (1 << 20);

// The 401 for an upload whose Authorization carries no farm token that may upload, or
// nullopt. The HTTP port asks it from the headers (IndexBodyLimits), so a refused upload
// costs its headers only: its body is never read, its connection closed.
std::optional<RequestRefusal> RefuseUploadWithoutToken(const httplib::Request& req,
                                                       const TokenVerifier& auth);

class LegacyUploadHandler {
 public:
  LegacyUploadHandler(PackageIndex* index, const TokenVerifier* auth, uint64_t max_upload_bytes)
      : index_(index), auth_(auth), max_upload_bytes_(max_upload_bytes) {}

  void Handle(const httplib::Request& req, httplib::Response& res,
              const httplib::ContentReader& reader) const;

 private:
  PackageIndex* const index_;
  const TokenVerifier* auth_;
  const uint64_t max_upload_bytes_;
};

}  // namespace farm::coordinator
