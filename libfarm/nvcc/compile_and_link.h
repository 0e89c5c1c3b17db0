// A call that compiles and links at once (`nvcc -shared -Xcompiler -fPIC k.cu -o libk.so`,
// `nvcc k.cu main.cpp -o prog`, `nvcc -lib k.cu -o libk.a`), taken apart the way nvcc runs
// it: each CUDA source compiled on its own, then nvcc's link of those objects with the
// call's other inputs and all its options. nvcc's plan for the whole call is the plan of a
// `-c` call per source followed by the plan of that link (the same steps with the same
// arguments; with -rdc=true the link includes the device link), so the compiles can split
// over the farm and the link, which is one local step anyway, runs here as nvcc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/nvcc/nvcc_command_line.h"

namespace farm {

struct CompileAndLink {
  // One `-c` call per CUDA source, in input order: the call's words less its other inputs,
  // its -o and its phase option, then `-c -o OBJECT`. Each passed CheckDecomposable.
  std::vector<NvccCommandLine> compiles;
  // nvcc's arguments for the link: the call's own words, each CUDA source replaced by the
  // object its compile writes.
  std::vector<std::string> link_args;
};

// True for a call whose phase links: none given, --link, or -lib.
bool CompilesAndLinks(const NvccCommandLine& command);

// Takes `command` (CompilesAndLinks) apart, its objects named OBJECT_DIR/<i>/<source's stem>.o
// (two sources may share a base name; the caller creates the directories). kUnimplemented
// "not decomposable: <reason>" when it cannot be, from a refused option to a source that
// does not split (CheckDecomposable's reason).
absl::StatusOr<CompileAndLink> PlanCompileAndLink(const NvccCommandLine& command,
                                                  const std::string& object_dir);

}  // namespace farm
