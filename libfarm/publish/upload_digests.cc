#include "libfarm/publish/upload_digests.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace farm {
namespace {

evp_md_ctx_st* NewContext(const EVP_MD* md) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  // Failing here means OpenSSL itself is broken; there is nothing sensible to return.
  if (ctx == nullptr || EVP_DigestInit_ex(ctx, md, nullptr) != 1) std::abort();
  return ctx;
}

std::string FinishHex(EVP_MD_CTX* ctx) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(md), static_cast<size_t>(len)));
}

}  // namespace

UploadHasher::UploadHasher() : sha256_(NewContext(EVP_sha256())), md5_(NewContext(EVP_md5())) {}

UploadHasher::~UploadHasher() {
  EVP_MD_CTX_free(sha256_);
  EVP_MD_CTX_free(md5_);
}

void UploadHasher::Update(absl::string_view data) {
  if (data.empty()) return;
  EVP_DigestUpdate(sha256_, data.data(), data.size());
  EVP_DigestUpdate(md5_, data.data(), data.size());
}

UploadDigests UploadHasher::Finish() { return {FinishHex(sha256_), FinishHex(md5_)}; }

absl::StatusOr<UploadDigests> DigestFileForUpload(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  UploadHasher hasher;
  std::string buf(1 << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    hasher.Update(absl::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat("error while reading ", path));
  return hasher.Finish();
}

bool Md5Matches(absl::string_view claimed, absl::string_view md5_hex) {
  claimed = absl::StripAsciiWhitespace(claimed);
  if (absl::AsciiStrToLower(claimed) == md5_hex) return true;
  std::string raw;
  if (!absl::WebSafeBase64Unescape(claimed, &raw)) return false;
  return absl::BytesToHexString(raw) == md5_hex;
}

}  // namespace farm
