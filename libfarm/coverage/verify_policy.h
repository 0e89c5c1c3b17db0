// What a wheel must satisfy, and how one container's device code is matched to a request.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "libfarm/coverage/inspection.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/elf/version_needs.h"

namespace farm {

struct VerifyPolicy {
  ArchList archs;
  std::optional<DottedVersion> max_glibc;  // --manylinux 2_35 -> 2.35
};

// Parses "2_35", "2.35", "manylinux_2_35" or a legacy alias ("manylinux2014").
absl::StatusOr<DottedVersion> ParseManylinuxPolicy(absl::string_view text);

// Whether `container` has SASS that runs `target`: the same SM with the same variant, or,
// for a generic request, an `a`/`f` build of that SM (both run on that SM's GPUs; kernels
// such as FlashAttention's Hopper ones exist only as sm_90a).
bool HasSassFor(const InspectedContainer& container, const CudaTarget& target);
// Whether `container` has PTX for exactly `target` (PTX only JITs forward from its own ISA).
bool HasPtxFor(const InspectedContainer& container, const CudaTarget& target);

// Whether the CUDA runtime loads this container from a file of `elf_type`, i.e. whether its
// archs matter: a linked library's __nv_relfatbin only feeds device links, and device-link
// stubs hold no kernels.
bool ContainerIsChecked(const InspectedContainer& container, uint16_t elf_type,
                        bool file_has_loaded_fatbin);

}  // namespace farm
