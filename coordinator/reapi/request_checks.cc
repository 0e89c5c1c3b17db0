#include "coordinator/reapi/request_checks.h"

#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"

namespace farm::coordinator::reapi {

namespace {

// SHA-256 of no bytes.
constexpr absl::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

}  // namespace

absl::Status CheckInstanceName(absl::string_view instance_name) {
  if (instance_name.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown instance name '", instance_name.substr(0, 200),
                   "': this farm serves one REAPI instance, the empty name. Fix: leave the "
                   "client's instance name empty (bgd: no --instance-name; Bazel: no "
                   "--remote_instance_name)"));
}

absl::Status CheckDigestFunction(rev2::DigestFunction::Value function) {
  if (function == rev2::DigestFunction::SHA256 || function == rev2::DigestFunction::UNKNOWN) {
    return absl::OkStatus();
  }
  const std::string name = rev2::DigestFunction::Value_IsValid(function)
                               ? rev2::DigestFunction::Value_Name(function)
                               : absl::StrCat(static_cast<int>(function));
  return absl::InvalidArgumentError(
      absl::StrCat("digest function ", name,
                   " is not supported: this farm's CAS stores SHA256 digests only (see "
                   "GetCapabilities). Fix: configure the client for SHA256"));
}

absl::StatusOr<farm::v1::Digest> ToFarmDigest(const rev2::Digest& digest) {
  farm::v1::Digest d;
  d.set_hash(digest.hash());
  d.set_size_bytes(digest.size_bytes());
  // Its message names the form (64 lowercase hex, size >= 0), without echoing a long hash.
  if (absl::Status s = ValidateDigest(d); !s.ok()) return s;
  return d;
}

rev2::Digest ToReapiDigest(const farm::v1::Digest& digest) {
  rev2::Digest d;
  d.set_hash(digest.hash());
  d.set_size_bytes(digest.size_bytes());
  return d;
}

bool IsEmptyBlob(const farm::v1::Digest& digest) {
  return digest.size_bytes() == 0 && digest.hash() == kEmptySha256;
}

}  // namespace farm::coordinator::reapi
