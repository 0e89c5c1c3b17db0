// The digests the legacy upload API carries (sha256_digest, md5_digest), computed in one
// streaming pass: uploads of any size are hashed without being held in memory.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct evp_md_ctx_st;

namespace farm {

struct UploadDigests {
  std::string sha256_hex;  // 64 lowercase hex characters
  std::string md5_hex;     // 32 lowercase hex characters (what twine 4 sends)
};

class UploadHasher {
 public:
  UploadHasher();
  ~UploadHasher();
  UploadHasher(const UploadHasher&) = delete;
  UploadHasher& operator=(const UploadHasher&) = delete;

  void Update(absl::string_view data);
  // Call once.
  UploadDigests Finish();

 private:
  evp_md_ctx_st* sha256_;
  evp_md_ctx_st* md5_;
};

// Reads `path` in chunks and digests it.
absl::StatusOr<UploadDigests> DigestFileForUpload(const std::string& path);

// True when `claimed` names the same MD5 as `md5_hex`, written either as hex (twine) or as
// unpadded urlsafe base64 (what Warehouse documents).
bool Md5Matches(absl::string_view claimed, absl::string_view md5_hex);

}  // namespace farm
