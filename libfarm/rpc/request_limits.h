// Bounds on the names and lists a request carries. Clients check them before they send
// (farmctl exits 2 naming the limit) and the coordinator checks them again on receipt: a
// hostile or mistaken 100,000-character name must be refused in a few words, not echoed
// into an error that no longer fits in gRPC's response metadata.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "farm/v1/builds.pb.h"
#include "farm/v1/types.pb.h"

namespace farm {

inline constexpr size_t kMaxNameBytes = 256;           // recipes, build ids, CPU archs, versions
inline constexpr size_t kMaxArchListBytes = 1024;      // "7.5;9.0;12.1"
inline constexpr size_t kMaxLabels = 64;               // per worker
inline constexpr size_t kMaxLabelBytes = 256;          // a label's key or value
inline constexpr size_t kMaxErrorMessageBytes = 4096;  // what ToGrpcStatus sends
// A submitted source tree's file list (paths, digests) travels in the submit request and
// again in the build's lease, each a gRPC message of at most 4 MiB: 3 MiB leaves room for the
// rest. About 30,000 files of typical path lengths.
inline constexpr size_t kMaxSourceListBytes = 3 << 20;
// What one file costs in that list besides its path: digest (64 hex, size), flags, framing.
inline constexpr size_t kSourceListBytesPerFile = 90;

// INVALID_ARGUMENT "<field> is N bytes; the limit is MAX. Fix: ..." when `value` is longer.
absl::Status CheckFieldLength(absl::string_view field, absl::string_view value, size_t max);

absl::Status CheckBuildId(absl::string_view build_id);
absl::Status CheckSubmitBuildRequest(const farm::v1::SubmitBuildRequest& request);
// For `farmctl submit --source`, before anything is uploaded: refuses a tree whose file
// list would exceed kMaxSourceListBytes, with its file count and the fix.
absl::Status CheckSourceListSize(const std::string& dir, size_t files, size_t path_bytes);
absl::Status CheckWorkerLabels(const farm::v1::WorkerCapabilities& capabilities);

// `message` cut to kMaxErrorMessageBytes (on a UTF-8 boundary), saying how much was cut.
std::string BoundedErrorMessage(absl::string_view message);

}  // namespace farm
