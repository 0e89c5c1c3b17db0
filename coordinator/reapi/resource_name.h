// ByteStream resource names of REAPI's CAS, parsed strictly:
//   Read:  {instance}/blobs/{hash}/{size}
//   Write: {instance}/uploads/{uuid}/blobs/{hash}/{size}[/{metadata}...]
// where {instance} is empty here (the leading slash goes with it; request_checks.h). Refused as
// INVALID_ARGUMENT, naming the form: empty, "." or ".." segments, compressed-blobs (the farm
// advertises no compressor), a digest-function segment (SHA-256 only: the spec omits the
// segment for it), a hash that is not 64 lowercase hex, a size that is not a decimal
// number, a uuid that is not 8-4-4-4-12 hex.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "farm/v1/cas.pb.h"

namespace farm::coordinator::reapi {

struct BlobResource {
  std::string instance_name;
  farm::v1::Digest digest;
};

absl::StatusOr<BlobResource> ParseReadResourceName(absl::string_view name);
absl::StatusOr<BlobResource> ParseWriteResourceName(absl::string_view name);

}  // namespace farm::coordinator::reapi
