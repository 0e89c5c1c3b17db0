#include "libfarm/cuda/arch_compat.h"

#include "absl/strings/str_cat.h"

namespace farm {

bool SassRunsOn(const CudaTarget& built, int gpu_sm) {
  switch (built.variant) {
    case ArchVariant::kArchSpecific:
      return built.sm == gpu_sm;
    case ArchVariant::kGeneric:
    case ArchVariant::kFamily:
      break;
  }
  return built.sm / 10 == gpu_sm / 10 && built.sm <= gpu_sm;
}

bool PtxRunsOn(const CudaTarget& built, int gpu_sm) {
  if (built.variant != ArchVariant::kGeneric) return SassRunsOn(built, gpu_sm);
  return built.sm <= gpu_sm;
}

std::string ArchRoute::Describe() const {
  std::string how = absl::StrCat(built.target.SmName(), " SASS");
  if (built.ptx) absl::StrAppend(&how, " + ", built.target.ComputeName(), " PTX");
  const std::string requested_text =
      absl::StrCat(requested.target.DottedName(), requested.ptx ? "+PTX" : "");
  return absl::StrCat(requested_text, ": ", Native() ? "" : "runs via ", how);
}

std::optional<CudaTarget> BestBuildableSass(int gpu_sm, const std::vector<CudaTarget>& buildable) {
  std::optional<CudaTarget> best;
  for (const CudaTarget& t : buildable) {
    if (!SassRunsOn(t, gpu_sm)) continue;
    // Nearest below the GPU wins: it uses the most of the GPU's instructions. An exact
    // generic target beats an `a`/`f` one of the same SM (it also runs on later GPUs).
    if (!best || best->sm < t.sm || (best->sm == t.sm && t.variant == ArchVariant::kGeneric)) {
      best = t;
    }
  }
  return best;
}

}  // namespace farm
