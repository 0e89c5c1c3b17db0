#include "libfarm/digest/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace farm {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  // Allocation or init failing means OpenSSL itself is broken; nothing sensible to return.
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) std::abort();
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::Update(absl::string_view data) {
  if (!data.empty()) EVP_DigestUpdate(ctx_, data.data(), data.size());
}

void Sha256::UpdateWord(absl::string_view word) {
  Update(absl::StrCat(word.size(), ":"));
  Update(word);
}

std::string Sha256::FinishHex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_, md, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * len, '0');
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = kHex[md[i] >> 4];
    out[2 * i + 1] = kHex[md[i] & 0xf];
  }
  return out;
}

}  // namespace farm
