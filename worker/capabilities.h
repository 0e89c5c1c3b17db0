// What this worker advertises: platform, size, CUDA toolkits, Python interpreters, GPUs and
// the shared libraries its loader knows, detected at start.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "farm/v1/types.pb.h"

namespace farm::worker {

struct CapabilityOptions {
  std::string work_dir;
  uint32_t slots = 0;  // 0: from cores and RAM
  std::map<std::string, std::string> labels;
  // Toolkit roots to use. Empty: discover them. {"none"}: advertise no toolkit. Each is
  // checked (files, nvcc runs here): a named one that fails is an error, a discovered one
  // is skipped with a warning.
  std::vector<std::string> cuda_paths;
  // GPUs the operator declared (--gpu). Non-empty: advertised instead of asking the driver.
  std::vector<farm::v1::GpuDevice> declared_gpus;
};

absl::StatusOr<farm::v1::WorkerCapabilities> DetectCapabilities(const CapabilityOptions& options);

// The copy of `detected` the worker registers with: protobuf text must be UTF-8, and a request
// holding other bytes is refused whole. What the host told (its hostname, a toolkit's or an
// interpreter's path) is sent escaped, with a warning naming the field (the worker keeps the
// real bytes to use them); a label, the operator's own text, is refused (INVALID_ARGUMENT
// naming it, with the fix).
absl::StatusOr<farm::v1::WorkerCapabilities> SendableCapabilities(
    const farm::v1::WorkerCapabilities& detected);

// Parses "k=v,k2=v2" (--labels). Keys: [A-Za-z0-9._/-]+; values may not contain ',' or '='.
absl::StatusOr<std::map<std::string, std::string>> ParseLabels(const std::string& text);

}  // namespace farm::worker
