#include "coordinator/reapi/resource_name.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "coordinator/reapi/request_checks.h"
#include "libfarm/digest/digest.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator::reapi {
namespace {

constexpr absl::string_view kReadForm = "{instance}/blobs/{hash}/{size}";
constexpr absl::string_view kWriteForm = "{instance}/uploads/{uuid}/blobs/{hash}/{size}[/metadata]";

// The lowercase DigestFunction names a resource name may carry as a segment.
bool IsDigestFunctionName(absl::string_view s) {
  for (absl::string_view n : {"sha256", "sha1", "md5", "vso", "sha384", "sha512", "murmur3",
                              "sha256tree", "blake3", "gitsha1"}) {
    if (s == n) return true;
  }
  return false;
}

// Names are echoed in errors: a hostile one is cut short.
std::string Quoted(absl::string_view name) {
  return absl::StrCat("'", name.substr(0, 200), name.size() > 200 ? "...'" : "'");
}

absl::Status Malformed(absl::string_view name, absl::string_view why, absl::string_view form) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed ByteStream resource name ", Quoted(name), ": ", why,
                   ". Fix: name the blob as ", form, " with a SHA256 hash"));
}

bool IsUuid(absl::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !absl::ascii_isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// The segments, refusing empty, "." and ".." ones (no name of ours needs them, and they read
// as paths to whoever logs or stores them).
absl::StatusOr<std::vector<absl::string_view>> Segments(absl::string_view name,
                                                        absl::string_view form) {
  std::vector<absl::string_view> segs = absl::StrSplit(name, '/');
  for (absl::string_view s : segs) {
    if (s == "..") return Malformed(name, "it contains a '..' segment", form);
    if (s == ".") return Malformed(name, "it contains a '.' segment", form);
    if (s.empty()) return Malformed(name, "it contains an empty segment", form);
  }
  return segs;
}

// The digest in `segs` starting at `at` ("{hash}/{size}"); `at` moves past it.
absl::StatusOr<farm::v1::Digest> DigestAt(absl::string_view name,
                                          const std::vector<absl::string_view>& segs, size_t& at,
                                          absl::string_view form) {
  if (at < segs.size() && IsDigestFunctionName(segs[at])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ByteStream resource name ", Quoted(name), " names digest function '", segs[at],
        "': this farm's CAS stores SHA256 digests only (see GetCapabilities). Fix: configure the "
        "client for SHA256 (its names carry no digest-function segment)"));
  }
  if (at + 2 > segs.size()) return Malformed(name, "it ends before {hash}/{size}", form);
  farm::v1::Digest d;
  d.set_hash(std::string(segs[at]));
  if (absl::Status s = ValidateHash(d.hash()); !s.ok()) return Malformed(name, s.message(), form);
  int64_t size = -1;
  const absl::string_view size_text = segs[at + 1];
  const bool digits =
      !size_text.empty() && size_text.size() <= 18 &&
      std::all_of(size_text.begin(), size_text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || !absl::SimpleAtoi(size_text, &size)) {
    return Malformed(
        name, absl::StrCat("size '", size_text.substr(0, 40), "' is not a decimal number"), form);
  }
  d.set_size_bytes(size);
  at += 2;
  return d;
}

absl::Status NoCompressedBlobs(absl::string_view name, absl::string_view form) {
  return absl::InvalidArgumentError(absl::StrCat(
      "ByteStream resource name ", Quoted(name),
      " asks for compressed-blobs: this farm advertises no compressor (see GetCapabilities). "
      "Fix: name the blob as ",
      form));
}

// Where the instance name ends: the first segment equal to `keyword`. The instance's own
// segments may not be any of REAPI's keywords, so a name of another kind (an upload's name
// given to Read) is refused here rather than read as an odd instance.
absl::StatusOr<size_t> Keyword(absl::string_view name, const std::vector<absl::string_view>& segs,
                               absl::string_view keyword, absl::string_view form) {
  for (size_t i = 0; i < segs.size(); ++i) {
    if (segs[i] == keyword) return i;
    if (segs[i] == "compressed-blobs") return NoCompressedBlobs(name, form);
    for (absl::string_view reserved :
         {"blobs", "uploads", "actions", "actionResults", "operations", "capabilities"}) {
      if (segs[i] == reserved) {
        return Malformed(name, absl::StrCat("'", reserved, "' comes where '", keyword, "' belongs"),
                         form);
      }
    }
  }
  return Malformed(name, absl::StrCat("it has no '", keyword, "' segment"), form);
}

}  // namespace

absl::StatusOr<BlobResource> ParseReadResourceName(absl::string_view name) {
  FARM_ASSIGN_OR_RETURN(const std::vector<absl::string_view> segs, Segments(name, kReadForm));
  FARM_ASSIGN_OR_RETURN(size_t at, Keyword(name, segs, "blobs", kReadForm));
  BlobResource r;
  r.instance_name = absl::StrJoin(segs.begin(), segs.begin() + static_cast<ptrdiff_t>(at), "/");
  ++at;
  FARM_ASSIGN_OR_RETURN(r.digest, DigestAt(name, segs, at, kReadForm));
  if (at != segs.size()) return Malformed(name, "it goes on after {hash}/{size}", kReadForm);
  FARM_RETURN_IF_ERROR(CheckInstanceName(r.instance_name));
  return r;
}

absl::StatusOr<BlobResource> ParseWriteResourceName(absl::string_view name) {
  FARM_ASSIGN_OR_RETURN(const std::vector<absl::string_view> segs, Segments(name, kWriteForm));
  FARM_ASSIGN_OR_RETURN(size_t at, Keyword(name, segs, "uploads", kWriteForm));
  BlobResource r;
  r.instance_name = absl::StrJoin(segs.begin(), segs.begin() + static_cast<ptrdiff_t>(at), "/");
  ++at;
  if (at >= segs.size() || !IsUuid(segs[at])) {
    return Malformed(name, "the segment after 'uploads' is not a UUID", kWriteForm);
  }
  ++at;
  if (at < segs.size() && segs[at] == "compressed-blobs")
    return NoCompressedBlobs(name, kWriteForm);
  if (at >= segs.size() || segs[at] != "blobs") {
    return Malformed(name, "the segment after the UUID is not 'blobs'", kWriteForm);
  }
  ++at;
  // Whatever follows {size} is the client's optional metadata, which the spec lets servers
  // ignore.
  FARM_ASSIGN_OR_RETURN(r.digest, DigestAt(name, segs, at, kWriteForm));
  FARM_RETURN_IF_ERROR(CheckInstanceName(r.instance_name));
  return r;
}

}  // namespace farm::coordinator::reapi
