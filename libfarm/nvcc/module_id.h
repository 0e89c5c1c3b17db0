// nvcc's module id: the name cudafe++ (EDG's front end) gives a translation unit. nvcc plans
// `cudafe++ --gen_module_id_file --module_id_file_name F`, and every cicc reads F. It is part
// of the name of every internal-linkage entity in the host object and the device code
// (anonymous namespaces, statics, CCCL's `_INTERNAL_` objects), so it decides their bytes.
//
// CUDA 13.0's cudafe++ writes "_<path hash>_<N>_<file name, N characters, '.' as '_'>_<tail>":
// the path hash is an 8-hex hash of the source's real path, and the tail names the first
// function or variable with external linkage the unit defines (not inline, not a template
// instance): the name itself when it is a plain identifier (`extern "C"`, a global variable),
// else an 8-hex hash of it. A unit that defines none (everything in anonymous namespaces or
// static, only templates and inline functions: PyTorch's kernel files, which register through
// a static object, are such units) gets "<8 hex>_<pid>": a hash of the source's mtime and
// the working directory, then cudafe++'s process id. Plain nvcc's bytes then differ in every
// run; farm-nvcc gives such a unit an id made of its inputs instead.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/nvcc/local_steps.h"
#include "libfarm/nvcc/nvcc_dryrun.h"

namespace farm {

// True when `id` (a module id file's content) ends in "_<8 hex>_<pid>" with `pid` the process
// id of the cudafe++ that wrote it: the unit defines no external function or variable.
bool IsPerProcessModuleId(absl::string_view id, pid_t cudafe_pid);

// `id` with its per-process tail replaced by "farm" and 16 hex digits of `inputs_digest_hex`:
// the path hash and file name stay nvcc's.
std::string ModuleIdOfInputs(absl::string_view id, absl::string_view inputs_digest_hex);

// After the plan's cudafe++ ran (in `local`): when it wrote a per-process module id, writes
// ModuleIdOfInputs over a digest of cudafe++'s and the host preprocessor's arguments (less the
// private `temp_dir`) and the preprocessed source cudafe++ read, and runs cudafe++ again
// without --gen_module_id_file, so that it reads that id: the host code it writes then names
// what every cicc names. Returns the new id, or nullopt when nvcc's was kept.
absl::StatusOr<std::optional<std::string>> MakeModuleIdOfInputs(const NvccDryrun& dryrun,
                                                                LocalSteps& local,
                                                                const std::string& temp_dir);

}  // namespace farm
