// nvcc's .fatbin.c: the fat binary as `.quad` lines of a top-level asm statement that puts
// it in the .nv_fatbin section, around C declarations that point the runtime at it. The
// host compile #includes it last, through the stub cicc writes.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

struct EmbeddedFatbin {
  // The text without its .quad lines and with the array bound of fatbinData dropped: two
  // files with equal frames compile to the same object except for the .nv_fatbin bytes
  // (without -g: the bound is only in debug info).
  std::string frame;
  std::string bytes;  // what the .quad lines assemble to
};

// Splits a .fatbin.c into frame and bytes. kInvalidArgument when it has no .quad lines or
// one that is not 0x followed by 16 hex digits per value.
absl::StatusOr<EmbeddedFatbin> ParseEmbeddedFatbin(absl::string_view text);

// A .fatbin.c holding one zero quad, in the frame CUDA 13.0's fatbinary writes for a
// whole-program (-c, not -rdc) compile: the host compile can start before the fat binary
// exists, and the frame of the real file shows whether it was the same.
std::string PlaceholderFatbinC();

}  // namespace farm
