// Understanding an nvcc invocation well enough to decide whether farm-nvcc may split it
// per architecture: its input, output, phase and dependency file, and the few options whose
// effect nvcc's --dryrun plan cannot carry (each refused with its reason). Everything else,
// including options nvcc forwards to the host compiler, is left to the plan farm-nvcc replays.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

// The phase nvcc stops after (its "phase options"); kLink when none is given.
enum class NvccMode {
  kLink,
  kCompile,
  kDeviceLink,
  kPreprocess,
  kDependencies,
  kCubin,
  kPtx,
  kFatbin,
  kLib
};

// One `-gencode arch=compute_X,code=[...]`: the virtual arch and the codes built from it
// ("sm_90a" SASS, "compute_90" PTX).
struct GencodeSpec {
  std::string arch;
  std::vector<std::string> codes;
};

struct DependencyOptions {
  bool only = false;                 // -M / -MM: dependencies are the whole output
  bool with_compile = false;         // -MD / -MMD
  bool nonsystem = false;            // -MM / -MMD
  bool phony_targets = false;        // -MP
  std::string file;                  // -MF
  std::vector<std::string> targets;  // -MT, in order
};

struct NvccCommandLine {
  // The arguments after options files were inlined: what nvcc effectively sees.
  std::vector<std::string> args;
  // `args` less -MD/-MMD/-MF/-MT/-MP and --threads: the compile itself, without its
  // dependency file and nvcc's own step scheduling.
  std::vector<std::string> args_without_dependencies;
  std::vector<std::string> inputs;
  std::string output;  // -o; empty means nvcc's default name
  // Where in `args` each input stands, and the words (first, last) of each -o and of each
  // phase option: a call that compiles and links is rewritten word by word into a compile
  // per CUDA source and a link (compile_and_link.h).
  std::vector<size_t> input_positions;
  std::vector<std::pair<size_t, size_t>> output_words;
  std::vector<std::pair<size_t, size_t>> phase_words;
  NvccMode mode = NvccMode::kLink;
  bool relocatable_device_code = false;  // -rdc=true or -dc
  std::vector<std::string> arch;         // -arch values ("sm_90a", "all", ...)
  std::vector<std::string> code;         // -code values
  std::vector<GencodeSpec> gencodes;
  std::vector<std::string> compiler_options;  // -Xcompiler, split on commas
  std::vector<std::string> ptxas_options;     // -Xptxas
  std::vector<std::string> fatbin_options;    // -Xfatbin
  std::string language;                       // -x; empty: from the file suffix
  std::optional<std::string> compress_mode;   // --compress-mode
  std::optional<int> threads;                 // -t / --threads
  bool device_debug = false;                  // -G
  bool line_info = false;                     // -lineinfo
  // nvcc -MD names: -MF and -MT when given, else the file and target nvcc would choose.
  DependencyOptions dependencies;
  // Words nvcc 13.0 does not define: forwarded to the host compiler or rejected by nvcc.
  std::vector<std::string> unknown_options;
  // Set when an option is understood but makes splitting unsafe or pointless; the reason
  // names it.
  std::optional<std::string> not_decomposable;
};

// Parses the arguments that follow the nvcc executable. `working_dir` resolves relative
// options files (empty: this process's directory). Errors: kUnimplemented "not
// decomposable: ..." for what farm-nvcc cannot split (an @file, a -gencode it cannot read), and
// kNotFound/kInvalidArgument for an unreadable or malformed options file or value. The
// caller runs plain nvcc on any error, which reports the problem in nvcc's own words.
absl::StatusOr<NvccCommandLine> ParseNvccCommandLine(const std::vector<std::string>& args,
                                                     const std::string& working_dir = "");

// The object the call writes: -o, or what nvcc names it without one ("k.o" for "src/k.cu"
// in the working directory). Empty when there is no single input.
std::string ObjectPath(const NvccCommandLine& command);

// OK when the call is a single-source device compile that farm-nvcc can split per arch;
// otherwise kUnimplemented "not decomposable: <reason>".
absl::Status CheckDecomposable(const NvccCommandLine& command);

// nvcc adds the words of NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS to every command line. Their
// effect shows in the dry run; what must not hide there is a refusal (-G, --keep, ...), a
// phase, a file or a dependency option. OK, or kUnimplemented "not decomposable: ...".
absl::Status CheckEnvironmentFlags(absl::string_view variable, absl::string_view value);

// Parses a -gencode value: "arch=compute_90,code=[compute_90,sm_90]", "code=sm_90",
// "code=\"sm_80,sm_86\"".
absl::StatusOr<GencodeSpec> ParseGencode(absl::string_view value);

// kUnimplemented "not decomposable: <reason>": the status for "run plain nvcc".
absl::Status NotDecomposable(absl::string_view reason);

// True for the status CheckDecomposable / ParseNvccCommandLine give for "run plain nvcc".
bool IsNotDecomposable(const absl::Status& status);

}  // namespace farm
