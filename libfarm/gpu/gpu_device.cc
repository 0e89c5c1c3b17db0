#include "libfarm/gpu/gpu_device.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/units/byte_size.h"

namespace farm {
namespace {

bool Printable(absl::string_view text) {
  for (char c : text) {
    if (!absl::ascii_isprint(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool AllDigits(absl::string_view text) {
  return !text.empty() && text.size() <= 3 && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// "13.0": what cuDriverGetVersion's 13000 becomes.
bool IsDriverVersion(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  return parts.size() == 2 && AllDigits(parts[0]) && AllDigits(parts[1]);
}

}  // namespace

std::string SmOfComputeCapability(int major, int minor) {
  return absl::StrCat("sm_", major * 10 + minor);
}

absl::StatusOr<int> GpuSm(absl::string_view sm) {
  auto item = ParseArchItem(sm);
  if (!item.ok()) return item.status();
  if (item->ptx || item->target.variant != ArchVariant::kGeneric) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", sm,
                     "' is not a GPU's SM: a GPU is a plain sm_XY, without an a/f "
                     "suffix or +PTX"));
  }
  return item->target.sm;
}

absl::StatusOr<farm::v1::GpuDevice> ParseGpuDeclaration(absl::string_view text) {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--gpu '", text.substr(0, 64), "': ", why,
        ". Fix: --gpu SM[:NAME[:MEMORY]], e.g. --gpu sm_90 or --gpu sm_90:H100:80GiB"));
  };
  std::vector<absl::string_view> parts = absl::StrSplit(text, absl::MaxSplits(':', 2));
  if (parts.empty() || absl::StripAsciiWhitespace(parts[0]).empty()) return refuse("no SM");
  auto sm = GpuSm(absl::StripAsciiWhitespace(parts[0]));
  if (!sm.ok()) return refuse(sm.status().message());
  farm::v1::GpuDevice gpu;
  gpu.set_sm(absl::StrCat("sm_", *sm));
  gpu.set_declared(true);
  if (parts.size() > 1) {
    const absl::string_view name = absl::StripAsciiWhitespace(parts[1]);
    if (name.size() > kMaxGpuNameBytes || !Printable(name)) {
      return refuse(
          absl::StrCat("the name must be printable ASCII of at most ", kMaxGpuNameBytes, " bytes"));
    }
    gpu.set_name(std::string(name));
  }
  if (parts.size() > 2) {
    auto bytes = ParseByteSize(std::string(absl::StripAsciiWhitespace(parts[2])));
    if (!bytes.ok()) return refuse(absl::StrCat("memory: ", bytes.status().message()));
    gpu.set_memory_bytes(*bytes);
  }
  return gpu;
}

absl::Status CheckAdvertisedGpus(const farm::v1::WorkerCapabilities& capabilities) {
  if (capabilities.gpus_size() > kMaxWorkerGpus) {
    return absl::InvalidArgumentError(absl::StrCat("the worker reports ", capabilities.gpus_size(),
                                                   " GPUs; the limit is ", kMaxWorkerGpus,
                                                   ". Fix: declare fewer with --gpu"));
  }
  for (int i = 0; i < capabilities.gpus_size(); ++i) {
    const auto& gpu = capabilities.gpus(i);
    const std::string which = absl::StrCat("GPU ", i);
    if (gpu.sm().size() > 16 || !absl::StartsWith(gpu.sm(), "sm_") || !GpuSm(gpu.sm()).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(which, " has SM '", gpu.sm().substr(0, 16),
                                                     "', not a known sm_XY. Fix: use --gpu with "
                                                     "a known SM, or this version's farm-worker"));
    }
    if (gpu.name().size() > kMaxGpuNameBytes || !Printable(gpu.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, "'s name is not printable ASCII of at most ", kMaxGpuNameBytes,
                       " bytes. Fix: name it with --gpu SM:NAME"));
    }
    if (!gpu.driver_cuda_version().empty() && !IsDriverVersion(gpu.driver_cuda_version())) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, "'s driver CUDA version '", gpu.driver_cuda_version().substr(0, 16),
                       "' is not MAJOR.MINOR. Fix: use this version's farm-worker"));
    }
  }
  return absl::OkStatus();
}

std::string GpuSummary(const google::protobuf::RepeatedPtrField<farm::v1::GpuDevice>& gpus) {
  if (gpus.empty()) return "-";
  // Kept in the order the worker reports them; alike ones counted once.
  std::vector<std::pair<std::string, int>> counted;
  for (const auto& gpu : gpus) {
    std::string key = absl::StrCat(gpu.sm(), gpu.declared() ? " (declared)" : "");
    auto it = std::find_if(counted.begin(), counted.end(),
                           [&](const auto& entry) { return entry.first == key; });
    if (it == counted.end()) {
      counted.emplace_back(std::move(key), 1);
    } else {
      ++it->second;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [key, n] : counted) {
    parts.push_back(n == 1 ? key : absl::StrCat(n, "x ", key));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace farm
