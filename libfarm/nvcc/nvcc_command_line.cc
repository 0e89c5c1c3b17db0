#include "libfarm/nvcc/nvcc_command_line.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libfarm/nvcc/shell_words.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

// What farm-nvcc does with an option once it is recognised.
enum class Action {
  kPass,  // affects every step alike and nvcc's dry run shows its effect: nothing to do
  kOutput,
  kCompile,
  kDeviceCompile,
  kDeviceLink,
  kPreprocess,
  kDepsOnly,
  kDepsOnlyNonsystem,
  kDepsWithCompile,
  kDepsWithCompileNonsystem,
  kDepFile,
  kDepTarget,
  kDepPhony,
  kCubin,
  kPtx,
  kFatbin,
  kLib,
  kLinkMode,
  kRdc,
  kArch,
  kCode,
  kGencode,
  kXcompiler,
  kXptxas,
  kXfatbin,
  kCompressMode,
  kThreads,
  kSchedulingOnly,  // like --threads: how nvcc runs its steps, not what they produce
  kDeviceDebug,
  kLineInfo,
  kOptionsFile,
  kLanguage,
  kRefuse,  // understood, but splitting would be wrong or is not supported yet
};

struct OptionSpec {
  const char* long_name;
  const char* short_name;  // nullptr when the option has none
  bool takes_value;
  Action action;
  const char* refuse_reason = nullptr;
};

// Every option nvcc 13.0 documents (`nvcc --help`), plus -Xcudafe/-Xfatbin, which it
// accepts without listing them. Most are kPass: farm-nvcc replays nvcc's own --dryrun plan,
// so whatever an option does to a step shows in that step's arguments. The table exists to
// find the input, the output and the phase, and to know which options take a value. A word
// it does not know is nvcc's business: nvcc forwards it to the host compiler (with
// -forward-unknown-to-host-compiler) or rejects it, and the dry run says which.
constexpr OptionSpec kOptions[] = {
    // Phases.
    {"compile", "c", false, Action::kCompile},
    {"device-c", "dc", false, Action::kDeviceCompile},
    {"device-link", "dlink", false, Action::kDeviceLink},
    {"preprocess", "E", false, Action::kPreprocess},
    {"generate-dependencies", "M", false, Action::kDepsOnly},
    {"generate-nonsystem-dependencies", "MM", false, Action::kDepsOnlyNonsystem},
    {"cubin", nullptr, false, Action::kCubin},
    {"ptx", nullptr, false, Action::kPtx},
    {"fatbin", nullptr, false, Action::kFatbin},
    {"lib", nullptr, false, Action::kLib},
    {"link", nullptr, false, Action::kLinkMode},
    // The phases below produce something a split -c does not: refused by what they make.
    {"device-w", "dw", false, Action::kRefuse, "-dw (device-only relocatable object)"},
    {"run", nullptr, false, Action::kRefuse, "-run executes the program"},
    {"cuda", nullptr, false, Action::kRefuse, "-cuda writes host C++ only"},
    {"optix-ir", nullptr, false, Action::kRefuse, "-optix-ir output"},
    {"ltoir", nullptr, false, Action::kRefuse, "-ltoir output (LTO intermediate)"},
    {"relocatable-link", "r", false, Action::kRefuse, "-r links relocatable device code"},
    // Dependency files: written by farm-nvcc from its own preprocess outputs.
    {"generate-dependencies-with-compile", "MD", false, Action::kDepsWithCompile},
    {"generate-nonsystem-dependencies-with-compile", "MMD", false,
     Action::kDepsWithCompileNonsystem},
    {"dependency-output", "MF", true, Action::kDepFile},
    {"dependency-target-name", "MT", true, Action::kDepTarget},
    {"generate-dependency-targets", "MP", false, Action::kDepPhony},
    // Files and paths.
    {"output-file", "o", true, Action::kOutput},
    {"options-file", "optf", true, Action::kOptionsFile},
    {"x", nullptr, true, Action::kLanguage},
    {"pre-include", "include", true, Action::kPass},
    {"library", "l", true, Action::kPass},
    {"define-macro", "D", true, Action::kPass},
    {"undefine-macro", "U", true, Action::kPass},
    {"include-path", "I", true, Action::kPass},
    {"system-include", "isystem", true, Action::kPass},
    {"library-path", "L", true, Action::kPass},
    {"output-directory", "odir", true, Action::kPass},
    {"compiler-bindir", "ccbin", true, Action::kPass},
    {"allow-unsupported-compiler", nullptr, false, Action::kPass},
    {"archiver-binary", "arbin", true, Action::kPass},
    {"cudart", nullptr, true, Action::kPass},
    {"cudadevrt", nullptr, true, Action::kPass},
    {"libdevice-directory", "ldir", true, Action::kPass},
    {"target-directory", "target-dir", true, Action::kPass},
    {"use-local-env", nullptr, false, Action::kPass},
    {"force-cl-env-setup", nullptr, false, Action::kPass},
    {"input-drive-prefix", "idp", true, Action::kPass},
    {"dependency-drive-prefix", "ddp", true, Action::kPass},
    {"drive-prefix", "dp", true, Action::kPass},
    // nvcc writes its temporaries beside the object instead of in TMPDIR: the plan would name
    // files in the user's tree that farm-nvcc cannot give stable names.
    {"objdir-as-tempdir", "objtemp", false, Action::kRefuse,
     "-objtemp puts nvcc's temporaries beside the object"},
    // Code generation and language: their effect is in the plan's arguments.
    {"profile", "pg", false, Action::kPass},
    {"debug", "g", false, Action::kPass},
    // -G's DWARF records the directory cicc ran in: the worker's scratch dir, not the user's.
    {"device-debug", "G", false, Action::kDeviceDebug},
    {"generate-line-info", "lineinfo", false, Action::kLineInfo},
    {"optimization-info", "opt-info", true, Action::kPass},
    {"optimize", "O", true, Action::kPass},
    {"Ofast-compile", "Ofc", true, Action::kPass},
    {"dopt", nullptr, true, Action::kPass},
    // Link-time optimisation embeds LTO-IR that a later -dlink compiles: no per-arch SASS.
    {"dlink-time-opt", "dlto", false, Action::kRefuse, "link-time optimisation (-dlto)"},
    {"lto", nullptr, false, Action::kRefuse, "link-time optimisation (-lto)"},
    {"gen-opt-lto", nullptr, false, Action::kRefuse, "link-time optimisation (-gen-opt-lto)"},
    {"ftemplate-backtrace-limit", nullptr, true, Action::kPass},
    {"ftemplate-depth", nullptr, true, Action::kPass},
    {"no-exceptions", "noeh", false, Action::kPass},
    {"shared", nullptr, false, Action::kPass},
    {"std", nullptr, true, Action::kPass},
    {"no-host-device-initializer-list", "nohdinitlist", false, Action::kPass},
    {"no-host-device-move-forward", "nohdmoveforward", false, Action::kPass},
    {"expt-relaxed-constexpr", nullptr, false, Action::kPass},
    {"extended-lambda", nullptr, false, Action::kPass},
    {"expt-extended-lambda", nullptr, false, Action::kPass},
    {"machine", "m", true, Action::kPass},
    {"m64", nullptr, false, Action::kPass},
    // Options for the tools nvcc drives.
    {"compiler-options", "Xcompiler", true, Action::kXcompiler},
    {"linker-options", "Xlinker", true, Action::kPass},
    {"archive-options", "Xarchive", true, Action::kPass},
    {"ptxas-options", "Xptxas", true, Action::kXptxas},
    {"nvlink-options", "Xnvlink", true, Action::kPass},
    {"cudafe-options", "Xcudafe", true, Action::kPass},
    {"fatbin-options", "Xfatbin", true, Action::kXfatbin},
    {"static-global-template-stub", nullptr, true, Action::kPass},
    {"device-entity-has-hidden-visibility", nullptr, true, Action::kPass},
    {"forward-unknown-to-host-compiler", nullptr, false, Action::kPass},
    {"forward-unknown-to-host-linker", nullptr, false, Action::kPass},
    {"forward-unknown-opts", nullptr, false, Action::kPass},
    {"dont-use-profile", "noprof", false, Action::kPass},
    // nvcc's own behaviour.
    {"threads", "t", true, Action::kThreads},
    // The jobserver only schedules nvcc's steps, as --threads does.
    {"jobserver", nullptr, false, Action::kSchedulingOnly},
    {"dryrun", nullptr, false, Action::kRefuse, "--dryrun runs nothing"},
    {"verbose", "v", false, Action::kRefuse, "-v prints nvcc's own sub-commands"},
    // cicc itself splits the module across threads: a plan shape farm-nvcc does not replay.
    {"split-compile", nullptr, true, Action::kRefuse,
     "--split-compile changes how cicc/ptxas are driven"},
    {"split-compile-extended", nullptr, true, Action::kRefuse,
     "--split-compile-extended changes how cicc/ptxas are driven"},
    {"fdevice-syntax-only", nullptr, false, Action::kRefuse,
     "--fdevice-syntax-only produces no device code"},
    {"fdevice-time-trace", nullptr, true, Action::kRefuse,
     "--fdevice-time-trace writes a trace file from the device compile"},
    // These expect nvcc's intermediate files in the user's directory afterwards.
    {"keep", nullptr, false, Action::kRefuse, "--keep expects nvcc's intermediate files"},
    {"keep-dir", nullptr, true, Action::kRefuse, "--keep-dir expects nvcc's intermediate files"},
    {"save-temps", nullptr, false, Action::kRefuse, "--save-temps expects intermediate files"},
    {"clean-targets", "clean", false, Action::kRefuse, "-clean deletes instead of compiling"},
    {"time", nullptr, true, Action::kRefuse, "--time writes nvcc's own step timings"},
    {"run-args", nullptr, true, Action::kPass},
    {"no-align-double", nullptr, false, Action::kPass},
    {"no-device-link", "nodlink", false, Action::kPass},
    // Targets.
    {"gpu-architecture", "arch", true, Action::kArch},
    {"gpu-code", "code", true, Action::kCode},
    {"generate-code", "gencode", true, Action::kGencode},
    {"relocatable-device-code", "rdc", true, Action::kRdc},
    {"entries", "e", true, Action::kPass},
    {"maxrregcount", nullptr, true, Action::kPass},
    {"use_fast_math", nullptr, false, Action::kPass},
    {"ftz", nullptr, true, Action::kPass},
    {"prec-div", nullptr, true, Action::kPass},
    {"prec-sqrt", nullptr, true, Action::kPass},
    {"fmad", nullptr, true, Action::kPass},
    {"extra-device-vectorization", nullptr, false, Action::kPass},
    {"default-stream", nullptr, true, Action::kPass},
    {"disable-warnings", "w", false, Action::kPass},
    {"keep-device-functions", nullptr, false, Action::kPass},
    {"source-in-ptx", "src-in-ptx", false, Action::kPass},
    {"restrict", nullptr, false, Action::kPass},
    {"Wreorder", nullptr, false, Action::kPass},
    {"Wdefault-stream-launch", nullptr, false, Action::kPass},
    {"Wmissing-launch-bounds", nullptr, false, Action::kPass},
    {"Wext-lambda-captures-this", nullptr, false, Action::kPass},
    {"Wno-deprecated-declarations", nullptr, false, Action::kPass},
    {"Wno-deprecated-gpu-targets", nullptr, false, Action::kPass},
    {"Wext-robust", nullptr, false, Action::kPass},
    {"Werror", nullptr, true, Action::kPass},
    {"resource-usage", "res-usage", false, Action::kPass},
    // Whole-program compilation across translation units needs the device link.
    {"extensible-whole-program", "ewp", false, Action::kRefuse, "-ewp"},
    {"no-compress", nullptr, false, Action::kPass},
    {"qpp-config", nullptr, true, Action::kPass},
    {"compile-as-tools-patch", "astoolspatch", false, Action::kPass},
    {"list-gpu-code", "code-ls", false, Action::kRefuse, "--list-gpu-code compiles nothing"},
    {"list-gpu-arch", "arch-ls", false, Action::kRefuse, "--list-gpu-arch compiles nothing"},
    {"display-error-number", "err-no", false, Action::kPass},
    {"no-display-error-number", "no-err-no", false, Action::kPass},
    {"diag-error", nullptr, true, Action::kPass},
    {"diag-suppress", nullptr, true, Action::kPass},
    {"diag-warn", nullptr, true, Action::kPass},
    {"host-linker-script", "hls", true, Action::kPass},
    {"augment-host-linker-script", "aug-hls", false, Action::kPass},
    {"brief-diagnostics", "brief-diag", true, Action::kPass},
    {"jump-table-density", "jtd", true, Action::kPass},
    {"relocatable-ptx", "reloc-ptx", false, Action::kPass},
    {"device-stack-protector", nullptr, true, Action::kPass},
    {"compress-mode", nullptr, true, Action::kCompressMode},
    {"frandom-seed", nullptr, true, Action::kPass},
    {"sanitize", nullptr, true, Action::kPass},
    {"help", "h", false, Action::kRefuse, "--help compiles nothing"},
    {"version", "V", false, Action::kRefuse, "--version compiles nothing"},
};

// The options of -MD/-MMD that only shape the dependency file written beside the object.
// --threads only schedules nvcc's own steps (and makes it redirect their output to files).
bool IsLeftOutOfSplit(Action action) {
  return action == Action::kDepsWithCompile || action == Action::kDepsWithCompileNonsystem ||
         action == Action::kDepFile || action == Action::kDepTarget ||
         action == Action::kDepPhony || action == Action::kThreads ||
         action == Action::kSchedulingOnly;
}

// The options that choose where nvcc stops (its "phase options").
bool IsPhase(Action action) {
  switch (action) {
    case Action::kCompile:
    case Action::kDeviceCompile:
    case Action::kDeviceLink:
    case Action::kPreprocess:
    case Action::kDepsOnly:
    case Action::kDepsOnlyNonsystem:
    case Action::kCubin:
    case Action::kPtx:
    case Action::kFatbin:
    case Action::kLib:
    case Action::kLinkMode:
      return true;
    default:
      return false;
  }
}

// Short options nvcc also accepts with the value glued on: -I/usr/include, -DNDEBUG, -O3.
constexpr const char* kAttachedValueShortNames[] = {"I", "D", "U", "L", "l", "O", "m"};

const OptionSpec* FindOption(absl::string_view name) {
  for (const OptionSpec& spec : kOptions) {
    if (name == spec.long_name || (spec.short_name != nullptr && name == spec.short_name)) {
      return &spec;
    }
  }
  return nullptr;
}

absl::StatusOr<std::vector<std::string>> ReadOptionsFile(const std::string& path,
                                                         const std::string& working_dir) {
  fs::path p(path);
  if (p.is_relative() && !working_dir.empty()) p = fs::path(working_dir) / p;
  std::ifstream in(p, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read nvcc options file ", p.string()));
  std::stringstream text;
  text << in.rdbuf();
  auto words = SplitShellWords(text.str());
  if (!words.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("nvcc options file ", p.string(), ": ", words.status().message()));
  }
  return *words;
}

// Splits "-name=value", "--name=value" into name and optional inline value.
struct OptionWord {
  std::string name;
  std::optional<std::string> value;
  bool single_dash = false;
};

OptionWord SplitOptionWord(absl::string_view arg) {
  OptionWord word;
  word.single_dash = !absl::StartsWith(arg, "--");
  absl::string_view body = arg.substr(word.single_dash ? 1 : 2);
  const size_t eq = body.find('=');
  if (eq == absl::string_view::npos) {
    word.name = std::string(body);
  } else {
    word.name = std::string(body.substr(0, eq));
    word.value = std::string(body.substr(eq + 1));
  }
  return word;
}

// Inlines --options-file/-optf (nvcc reads them as if their words were on the command line,
// and they may name further options files).
absl::Status ExpandOptionsFiles(const std::vector<std::string>& args,
                                const std::string& working_dir, int depth,
                                std::vector<std::string>& out) {
  if (depth > 8) return absl::InvalidArgumentError("nvcc options files nest more than 8 deep");
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() > 1 && arg[0] == '@') {
      // nvcc 13.0 answers "Don't know what to do with '@file'"; expanding it here would
      // make farm-nvcc accept what nvcc refuses.
      return NotDecomposable(
          absl::StrCat("nvcc does not read response files like '", arg, "' (use --options-file)"));
    }
    if (arg.size() < 2 || arg[0] != '-') {
      out.push_back(arg);
      continue;
    }
    OptionWord word = SplitOptionWord(arg);
    const OptionSpec* spec = FindOption(word.name);
    if (spec == nullptr || spec->action != Action::kOptionsFile) {
      out.push_back(arg);
      continue;
    }
    std::string value;
    if (word.value) {
      value = *word.value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat(arg, " needs a file name"));
    }
    for (absl::string_view file : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      auto words = ReadOptionsFile(std::string(file), working_dir);
      if (!words.ok()) return words.status();
      if (absl::Status s = ExpandOptionsFiles(*words, working_dir, depth + 1, out); !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

bool IsTargetName(absl::string_view name) {
  static const std::regex kTarget(R"(^(sm|compute)_\d+[af]?$)");
  return std::regex_match(std::string(name), kTarget);
}

absl::Status SetMode(NvccCommandLine& cmd, NvccMode mode, bool& mode_set, absl::string_view arg) {
  if (mode_set && cmd.mode != mode) {
    return NotDecomposable(absl::StrCat("more than one phase option (", arg, ")"));
  }
  cmd.mode = mode;
  mode_set = true;
  return absl::OkStatus();
}

void AppendCommaList(absl::string_view value, std::vector<std::string>& out) {
  for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    out.emplace_back(item);
  }
}

absl::Status ApplyOption(const OptionSpec& spec, absl::string_view arg, const std::string& value,
                         NvccCommandLine& cmd, bool& mode_set) {
  switch (spec.action) {
    case Action::kPass:
    case Action::kSchedulingOnly:
    case Action::kOptionsFile:
      return absl::OkStatus();
    case Action::kOutput:
      cmd.output = value;
      return absl::OkStatus();
    case Action::kCompile:
      return SetMode(cmd, NvccMode::kCompile, mode_set, arg);
    case Action::kDeviceCompile:
      cmd.relocatable_device_code = true;
      return SetMode(cmd, NvccMode::kCompile, mode_set, arg);
    case Action::kDeviceLink:
      return SetMode(cmd, NvccMode::kDeviceLink, mode_set, arg);
    case Action::kPreprocess:
      return SetMode(cmd, NvccMode::kPreprocess, mode_set, arg);
    case Action::kDepsOnlyNonsystem:
      cmd.dependencies.nonsystem = true;
      [[fallthrough]];
    case Action::kDepsOnly:
      cmd.dependencies.only = true;
      return SetMode(cmd, NvccMode::kDependencies, mode_set, arg);
    case Action::kDepsWithCompileNonsystem:
      cmd.dependencies.nonsystem = true;
      [[fallthrough]];
    case Action::kDepsWithCompile:
      cmd.dependencies.with_compile = true;
      return absl::OkStatus();
    case Action::kDepFile:
      cmd.dependencies.file = value;
      return absl::OkStatus();
    case Action::kDepTarget:
      cmd.dependencies.targets.push_back(value);
      return absl::OkStatus();
    case Action::kDepPhony:
      cmd.dependencies.phony_targets = true;
      return absl::OkStatus();
    case Action::kCubin:
      return SetMode(cmd, NvccMode::kCubin, mode_set, arg);
    case Action::kPtx:
      return SetMode(cmd, NvccMode::kPtx, mode_set, arg);
    case Action::kFatbin:
      return SetMode(cmd, NvccMode::kFatbin, mode_set, arg);
    case Action::kLib:
      return SetMode(cmd, NvccMode::kLib, mode_set, arg);
    case Action::kLinkMode:
      return SetMode(cmd, NvccMode::kLink, mode_set, arg);
    case Action::kRdc:
      if (value == "true") {
        cmd.relocatable_device_code = true;
      } else if (value == "false") {
        cmd.relocatable_device_code = false;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(arg, ": expected true or false"));
      }
      return absl::OkStatus();
    case Action::kArch:
      for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        if (item == "native") {
          return NotDecomposable("-arch=native depends on the GPUs of the build host");
        }
        if (!IsTargetName(item) && item != "all" && item != "all-major") {
          return NotDecomposable(absl::StrCat("-arch value '", item, "'"));
        }
        cmd.arch.emplace_back(item);
      }
      return absl::OkStatus();
    case Action::kCode:
      for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        if (!IsTargetName(item)) return NotDecomposable(absl::StrCat("-code value '", item, "'"));
        cmd.code.emplace_back(item);
      }
      return absl::OkStatus();
    case Action::kGencode: {
      auto gencode = ParseGencode(value);
      if (!gencode.ok()) return gencode.status();
      cmd.gencodes.push_back(*std::move(gencode));
      return absl::OkStatus();
    }
    case Action::kXcompiler:
      AppendCommaList(value, cmd.compiler_options);
      return absl::OkStatus();
    case Action::kXptxas:
      AppendCommaList(value, cmd.ptxas_options);
      return absl::OkStatus();
    case Action::kXfatbin:
      AppendCommaList(value, cmd.fatbin_options);
      return absl::OkStatus();
    case Action::kCompressMode:
      if (value != "default" && value != "size" && value != "speed" && value != "balance" &&
          value != "none") {
        return NotDecomposable(absl::StrCat("--compress-mode value '", value, "'"));
      }
      cmd.compress_mode = value;
      return absl::OkStatus();
    case Action::kThreads: {
      int threads = 0;
      if (!absl::SimpleAtoi(value, &threads) || threads < 0) {
        return absl::InvalidArgumentError(absl::StrCat(arg, ": expected a number, got ", value));
      }
      cmd.threads = threads;
      return absl::OkStatus();
    }
    case Action::kLanguage:
      cmd.language = value;
      return absl::OkStatus();
    case Action::kDeviceDebug:
      cmd.device_debug = true;
      return absl::OkStatus();
    case Action::kLineInfo:
      cmd.line_info = true;
      return absl::OkStatus();
    case Action::kRefuse:
      if (!cmd.not_decomposable) cmd.not_decomposable = spec.refuse_reason;
      return absl::OkStatus();
  }
  return absl::InternalError("unhandled nvcc option action");
}

}  // namespace

absl::Status NotDecomposable(absl::string_view reason) {
  return absl::UnimplementedError(absl::StrCat("not decomposable: ", reason));
}

absl::StatusOr<GencodeSpec> ParseGencode(absl::string_view value) {
  // "arch=compute_90,code=[compute_90,sm_90]": code's list may be bracketed, quoted or bare.
  if (!absl::StartsWith(value, "arch=")) {
    return NotDecomposable(absl::StrCat("-gencode value '", value, "' does not start with arch="));
  }
  const size_t code_at = value.find(",code=");
  if (code_at == absl::string_view::npos) {
    return NotDecomposable(absl::StrCat("-gencode value '", value, "' has no code="));
  }
  GencodeSpec spec;
  spec.arch = std::string(value.substr(5, code_at - 5));
  if (!IsTargetName(spec.arch) || !absl::StartsWith(spec.arch, "compute_")) {
    return NotDecomposable(absl::StrCat("-gencode arch '", spec.arch, "'"));
  }
  absl::string_view codes = value.substr(code_at + 6);
  if (codes.size() >= 2 && ((codes.front() == '[' && codes.back() == ']') ||
                            (codes.front() == '"' && codes.back() == '"') ||
                            (codes.front() == '{' && codes.back() == '}'))) {
    codes = codes.substr(1, codes.size() - 2);
  }
  for (absl::string_view code : absl::StrSplit(codes, ',', absl::SkipEmpty())) {
    if (!IsTargetName(code)) {
      // lto_XX and anything else new changes what the fat binary holds.
      return NotDecomposable(absl::StrCat("-gencode code '", code, "'"));
    }
    spec.codes.emplace_back(code);
  }
  if (spec.codes.empty()) return NotDecomposable(absl::StrCat("-gencode '", value, "' codes"));
  return spec;
}

absl::StatusOr<NvccCommandLine> ParseNvccCommandLine(const std::vector<std::string>& args,
                                                     const std::string& working_dir) {
  NvccCommandLine cmd;
  if (absl::Status s = ExpandOptionsFiles(args, working_dir, 0, cmd.args); !s.ok()) return s;
  bool mode_set = false;
  const std::vector<std::string>& words = cmd.args;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& arg = words[i];
    if (arg.size() < 2 || arg[0] != '-') {
      cmd.inputs.push_back(arg);
      cmd.input_positions.push_back(i);
      cmd.args_without_dependencies.push_back(arg);
      continue;
    }
    const size_t first = i;
    OptionWord word = SplitOptionWord(arg);
    const OptionSpec* spec = FindOption(word.name);
    std::string value;
    if (spec == nullptr && word.single_dash) {
      for (const char* short_name : kAttachedValueShortNames) {
        if (absl::StartsWith(word.name, short_name) && word.name.size() > strlen(short_name)) {
          spec = FindOption(short_name);
          value = arg.substr(1 + strlen(short_name));
          break;
        }
      }
      if (spec != nullptr) {
        if (absl::Status s = ApplyOption(*spec, arg, value, cmd, mode_set); !s.ok()) return s;
        cmd.args_without_dependencies.push_back(arg);
        continue;
      }
    }
    if (spec == nullptr) {
      // Not nvcc 13.0's: nvcc forwards it to the host compiler as one word (a separate value
      // after it becomes an input, as in nvcc) or rejects it. Either shows in the dry run.
      cmd.unknown_options.push_back(arg);
      cmd.args_without_dependencies.push_back(arg);
      continue;
    }
    if (spec->takes_value) {
      if (word.value) {
        value = *word.value;
      } else if (i + 1 < words.size()) {
        value = words[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("nvcc option ", arg, " needs a value"));
      }
    } else if (word.value) {
      return NotDecomposable(absl::StrCat("nvcc option '", arg, "' takes no value"));
    }
    if (absl::Status s = ApplyOption(*spec, arg, value, cmd, mode_set); !s.ok()) return s;
    if (spec->action == Action::kOutput) cmd.output_words.emplace_back(first, i);
    if (IsPhase(spec->action)) cmd.phase_words.emplace_back(first, i);
    if (!IsLeftOutOfSplit(spec->action)) {
      cmd.args_without_dependencies.insert(cmd.args_without_dependencies.end(),
                                           words.begin() + first, words.begin() + i + 1);
    }
  }
  if (cmd.dependencies.with_compile && cmd.inputs.size() == 1) {
    // What nvcc 13.0 writes without -MF/-MT: the object's name with ".d" for its last
    // extension, and the object as the target.
    const std::string object = ObjectPath(cmd);
    if (cmd.dependencies.file.empty()) {
      cmd.dependencies.file = fs::path(object).replace_extension(".d").string();
    }
    if (cmd.dependencies.targets.empty()) cmd.dependencies.targets.push_back(object);
  }
  return cmd;
}

std::string ObjectPath(const NvccCommandLine& command) {
  if (!command.output.empty() || command.inputs.size() != 1) return command.output;
  // nvcc -c without -o writes the input's base name with ".o" in the working directory.
  return fs::path(command.inputs.front()).filename().replace_extension(".o").string();
}

absl::Status CheckDecomposable(const NvccCommandLine& command) {
  if (command.not_decomposable) return NotDecomposable(*command.not_decomposable);
  switch (command.mode) {
    case NvccMode::kCompile:
      break;
    case NvccMode::kDeviceLink:
      return NotDecomposable("-dlink is one nvlink step; it runs locally");
    case NvccMode::kPreprocess:
      return NotDecomposable("-E only preprocesses");
    case NvccMode::kDependencies:
      return NotDecomposable("-M/-MM only lists dependencies");
    case NvccMode::kCubin:
    case NvccMode::kPtx:
    case NvccMode::kFatbin:
      return NotDecomposable("-cubin/-ptx/-fatbin output is not split yet");
    case NvccMode::kLib:
    case NvccMode::kLink:
      return NotDecomposable("compiling and linking in one call (no -c/-dc)");
  }
  if (command.inputs.size() != 1) {
    return NotDecomposable(
        absl::StrCat(command.inputs.size(), " input files (one .cu per call is split)"));
  }
  const std::string& input = command.inputs.front();
  if (command.device_debug) {
    return NotDecomposable("-G device debug info records the compiling directory");
  }
  if (command.language.empty() ? !absl::EndsWith(input, ".cu") : command.language != "cu") {
    return NotDecomposable(absl::StrCat("'", input, "' is not a .cu file: no device code"));
  }
  return absl::OkStatus();
}

absl::Status CheckEnvironmentFlags(absl::string_view variable, absl::string_view value) {
  auto words = SplitShellWords(value);
  if (!words.ok()) {
    return NotDecomposable(
        absl::StrCat(variable, " is not a list of words: ", words.status().message()));
  }
  auto flags = ParseNvccCommandLine(*words);
  if (!flags.ok()) return NotDecomposable(absl::StrCat(variable, ": ", flags.status().message()));
  if (flags->not_decomposable) {
    return NotDecomposable(absl::StrCat(variable, ": ", *flags->not_decomposable));
  }
  const DependencyOptions& deps = flags->dependencies;
  if (!flags->inputs.empty() || !flags->output.empty() || flags->mode != NvccMode::kLink ||
      flags->device_debug || flags->threads || !flags->language.empty() || deps.with_compile ||
      deps.only || !deps.file.empty() || !deps.targets.empty() || deps.phony_targets) {
    return NotDecomposable(absl::StrCat(variable,
                                        " names a file, a phase or a dependency option ('", value,
                                        "'): only the command line's are split"));
  }
  return absl::OkStatus();
}

bool IsNotDecomposable(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnimplemented &&
         absl::StartsWith(status.message(), "not decomposable: ");
}

}  // namespace farm
