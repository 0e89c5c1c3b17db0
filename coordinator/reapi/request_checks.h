// What every REAPI request must satisfy before the farm's CAS is asked: the farm serves one
// instance (the empty name) and stores SHA-256 digests only, so a request naming another
// instance or digest function, or a digest that is not 64 lowercase hex and a size >= 0, is
// refused as INVALID_ARGUMENT naming what the farm serves.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "build/bazel/remote/execution/v2/remote_execution.pb.h"
#include "farm/v1/cas.pb.h"

namespace farm::coordinator::reapi {

namespace rev2 = ::build::bazel::remote::execution::v2;

// OK for the empty instance name, the only one the farm serves.
absl::Status CheckInstanceName(absl::string_view instance_name);

// OK for SHA256 and for UNKNOWN (a client that predates the field; its hashes are SHA-256
// when they have 64 hex digits, which ToFarmDigest checks).
absl::Status CheckDigestFunction(rev2::DigestFunction::Value function);

// The farm's form of a REAPI digest, checked.
absl::StatusOr<farm::v1::Digest> ToFarmDigest(const rev2::Digest& digest);
rev2::Digest ToReapiDigest(const farm::v1::Digest& digest);

// The empty blob, which REAPI servers must treat as always present.
bool IsEmptyBlob(const farm::v1::Digest& digest);

}  // namespace farm::coordinator::reapi
