// The sub-commands `nvcc --dryrun` prints, kept as nvcc wrote them and classified, with
// the per-arch device steps grouped so each group can run elsewhere.
//
// Steps are recognised by tool name and flags, and linked by the files they pass on
// (a cicc step belongs to the preprocess whose -o it reads), never by position: nvcc
// reorders steps with -t/-MD and later toolkits add flags (sccache broke on both).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace farm {

enum class DryrunStepKind {
  kEnvironment,       // NAME=value that nvcc sets for the steps after it
  kHostPreprocess,    // host compiler -E without __CUDA_ARCH__ (feeds cudafe++)
  kCudafe,            // cudafe++: splits host and device code, writes the .module_id
  kDevicePreprocess,  // host compiler -E -D__CUDA_ARCH__=N: one per virtual arch
  kCicc,              // .ii -> .ptx for one virtual arch
  kPtxas,             // .ptx -> .cubin; without -o only a syntax check (PTX-only target)
  kFatbinary,         // cubins and PTX -> the fat binary embedded in the host object
  kHostCompile,       // host compiler -c
  kHostLink,          // host compiler linking (no -E, no -c)
  kNvlink,            // device link
  kRemove,            // rm of a temporary
  kDependencyFilter,  // "-- Filter Dependencies --": done inside nvcc, not a command
  kOther,             // a tool farm-nvcc does not know (nvprune, ...)
};

const char* DryrunStepKindName(DryrunStepKind kind);

struct FatbinImage {
  std::string kind;  // "elf" or "ptx"
  std::string sm;    // "90", "90a", "100f"
  std::string file;
};

struct DryrunStep {
  DryrunStepKind kind = DryrunStepKind::kOther;
  std::string line;               // verbatim, without the "#$ " prefix
  std::vector<std::string> argv;  // shell words, redirections removed, $VARS unexpanded
  std::string tool;               // argv[0]'s base name: "gcc", "cicc", "ptxas"
  std::string output;             // -o (empty when there is none)
  std::string stdout_redirect;    // "> FILE" (nvcc -t adds these)
  std::string stderr_redirect;    // "2> FILE"
  // kEnvironment: the assignment, value unquoted.
  std::string env_name;
  std::string env_value;
  // kDevicePreprocess: N of -D__CUDA_ARCH__=N (also set on host steps nvcc gives it to).
  std::optional<int> cuda_arch;
  // kCicc: "compute_90a"; kPtxas: "sm_90a" or "compute_90" (syntax check).
  std::string arch;
  std::vector<FatbinImage> images;  // kFatbinary
};

// The device work for one virtual arch: device preprocess -> cicc -> ptxas (0 or more).
struct DeviceGroup {
  std::string virtual_arch;  // "compute_90a": the key; __CUDA_ARCH__ alone cannot tell 90/90a
  int cuda_arch = 0;         // 900
  size_t preprocess = 0;     // indices into NvccDryrun::steps
  size_t cicc = 0;
  std::vector<size_t> ptxas;
  std::string preprocessed_file;                            // the .ii cicc reads
  std::string ptx_file;                                     // cicc's -o
  std::vector<std::pair<std::string, std::string>> cubins;  // (sm, file) ptxas writes
  bool ptx_in_fatbin = false;  // the PTX itself is embedded (code=compute_X)
};

struct NvccDryrun {
  std::vector<DryrunStep> steps;                                 // nvcc's order
  std::vector<std::pair<std::string, std::string>> environment;  // in order
  std::vector<DeviceGroup> device_groups;  // in the order their cicc steps appear
  std::optional<size_t> fatbinary;
  std::string module_id_file;  // cudafe++ writes it and every cicc reads it (CUDA 12.8+)

  std::vector<size_t> StepsOfKind(DryrunStepKind kind) const;
};

// Parses the stderr of `nvcc --dryrun`. Lines without "#$ " are ignored. Errors: a step
// that cannot be split into words, a cicc or ptxas whose input no earlier step produces,
// a fatbinary image no step produces.
absl::StatusOr<NvccDryrun> ParseNvccDryrun(absl::string_view stderr_text);

// Runs `nvcc --dryrun ARGS` in `working_dir` (empty: here) and parses its steps. A
// non-zero exit is kFailedPrecondition carrying nvcc's stderr. With `private_temp_dir`,
// nvcc's temporaries are planned inside it (TMPDIR) under stable names (StableTempNames).
absl::StatusOr<NvccDryrun> RunNvccDryrun(const std::string& nvcc,
                                         const std::vector<std::string>& args,
                                         const std::string& working_dir = "",
                                         absl::Duration timeout = absl::Seconds(60),
                                         const std::string& private_temp_dir = "");

// Renames nvcc's per-process temporaries ("tmpxft_0000a1b2_00000000-6_k.ptx") to stable
// names ("farm-6_k.ptx") in dryrun text. Only safe when the dryrun ran with TMPDIR set to a
// directory of the caller's own: two calls would otherwise share the names. Stable names
// keep device actions identical between builds, so the action cache can answer them.
std::string StableTempNames(absl::string_view dryrun_text);

// The value of `flag` in a step's words ("-o F", "--flag F" or "--flag=F"); empty if absent.
std::string DryrunFlagValue(const std::vector<std::string>& argv, absl::string_view flag);

// `step.argv` with $VARS expanded from the dryrun's environment, ready to execute.
std::vector<std::string> ExpandedArgv(const NvccDryrun& dryrun, const DryrunStep& step);

// The toolkit that made the plan, from the -D__CUDACC_VER_{MAJOR,MINOR,BUILD}__ nvcc gives
// its preprocessors: version "13.0" and release "13.0.88" (`nvcc --version`'s "V13.0.88"
// without the V). UNIMPLEMENTED ("not decomposable: ...") when the plan names none.
struct DryrunToolkit {
  std::string version;
  std::string release;
};
absl::StatusOr<DryrunToolkit> ToolkitOfDryrun(const NvccDryrun& dryrun);

}  // namespace farm
