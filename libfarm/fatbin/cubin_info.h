// What a cubin (device-code ELF, e_machine EM_CUDA) says about itself.
#pragma once

#include "absl/status/statusor.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/elf/byte_span.h"

namespace farm {

struct CubinInfo {
  CudaTarget target;         // variant only when the tkinfo note names it ("-arch sm_90a")
  bool relocatable = false;  // -rdc object (ET_REL) rather than a linked image
  bool has_code = false;     // any non-empty .text.* section, i.e. at least one kernel/function
};

bool IsCubin(ByteSpan data);

// SM decoding (as cuobjdump reports it, checked against nvcc 12.x/13.0 cubins): ABI version >= 8
// keeps the SM in e_flags bits 8-15; the older ABI keeps it in the low byte with 0x800 marking `a`.
absl::StatusOr<CubinInfo> ReadCubinInfo(ByteSpan data);

}  // namespace farm
