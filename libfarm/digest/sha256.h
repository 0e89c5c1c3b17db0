// Streaming SHA-256 (OpenSSL EVP, which uses the CPU's SHA extensions where present), so a
// blob of any size is hashed while it is read or received, never held whole in memory.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

struct evp_md_ctx_st;

namespace farm {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  // The moved-from object must not be used again.
  Sha256(Sha256&& other) noexcept : ctx_(other.ctx_) { other.ctx_ = nullptr; }
  Sha256& operator=(Sha256&&) = delete;

  void Update(absl::string_view data);
  // Update("<size>:" word): a key made of words this way hashes no two lists of words alike
  // ("ab", "c" and "a", "bc" differ).
  void UpdateWord(absl::string_view word);
  // The digest of everything passed to Update, as 64 lowercase hex characters. Call once.
  std::string FinishHex();

 private:
  evp_md_ctx_st* ctx_;
};

}  // namespace farm
