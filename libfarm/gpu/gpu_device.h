// GPUs as workers report them: the operator's --gpu declaration, the coordinator's check of
// what a worker sends, and the short forms fleet listings show.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "farm/v1/types.pb.h"

namespace farm {

inline constexpr int kMaxWorkerGpus = 64;
inline constexpr size_t kMaxGpuNameBytes = 128;

// "sm_90", "sm_90:H100", "sm_90:H100:80GiB" (also "9.0" or "90" for the SM): a GPU the
// operator names for a host where the driver cannot be asked. Marked declared.
absl::StatusOr<farm::v1::GpuDevice> ParseGpuDeclaration(absl::string_view text);

// The SM of a real GPU's compute capability ("sm_90" -> 90): a known, plain target (a GPU has
// no "a"/"f" variant and no PTX).
absl::StatusOr<int> GpuSm(absl::string_view sm);

// "sm_90" for compute capability 9.0.
std::string SmOfComputeCapability(int major, int minor);

// What the coordinator accepts from a worker: at most kMaxWorkerGpus, each with a valid SM,
// a printable name of at most kMaxGpuNameBytes and a driver version like "13.0".
absl::Status CheckAdvertisedGpus(const farm::v1::WorkerCapabilities& capabilities);

// "sm_90" for one GPU, "2x sm_90" for two alike, declared ones marked "sm_90 (declared)";
// "-" for none. For fleet tables.
std::string GpuSummary(const google::protobuf::RepeatedPtrField<farm::v1::GpuDevice>& gpus);

}  // namespace farm
