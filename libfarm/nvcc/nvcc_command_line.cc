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

// nvcc 13.0's options that real builds use (nvcc --help). Unlisted means unknown.
constexpr OptionSpec kOptions[] = {
    {"output-file", "o", true, Action::kOutput},
    {"compile", "c", false, Action::kCompile},
    {"device-c", "dc", false, Action::kDeviceCompile},
    {"device-link", "dlink", false, Action::kDeviceLink},
    {"preprocess", "E", false, Action::kPreprocess},
    {"generate-dependencies", "M", false, Action::kDepsOnly},
    {"generate-nonsystem-dependencies", "MM", false, Action::kDepsOnlyNonsystem},
    {"generate-dependencies-with-compile", "MD", false, Action::kDepsWithCompile},
    {"generate-nonsystem-dependencies-with-compile", "MMD", false,
     Action::kDepsWithCompileNonsystem},
    {"dependency-output", "MF", true, Action::kDepFile},
    {"dependency-target-name", "MT", true, Action::kDepTarget},
    {"generate-dependency-targets", "MP", false, Action::kDepPhony},
    {"cubin", nullptr, false, Action::kCubin},
    {"ptx", nullptr, false, Action::kPtx},
    {"fatbin", nullptr, false, Action::kFatbin},
    {"lib", nullptr, false, Action::kLib},
    {"link", nullptr, false, Action::kLinkMode},
    {"relocatable-device-code", "rdc", true, Action::kRdc},
    {"gpu-architecture", "arch", true, Action::kArch},
    {"gpu-code", "code", true, Action::kCode},
    {"generate-code", "gencode", true, Action::kGencode},
    {"options-file", "optf", true, Action::kOptionsFile},
    {"compiler-options", "Xcompiler", true, Action::kXcompiler},
    {"ptxas-options", "Xptxas", true, Action::kXptxas},
    {"fatbin-options", "Xfatbin", true, Action::kXfatbin},
    {"linker-options", "Xlinker", true, Action::kPass},
    {"nvlink-options", "Xnvlink", true, Action::kPass},
    {"archive-options", "Xarchive", true, Action::kPass},
    {"cudafe-options", "Xcudafe", true, Action::kPass},
    {"compress-mode", nullptr, true, Action::kCompressMode},
    {"no-compress", nullptr, false, Action::kPass},
    {"threads", "t", true, Action::kThreads},
    {"device-debug", "G", false, Action::kDeviceDebug},
    {"generate-line-info", "lineinfo", false, Action::kLineInfo},
    {"debug", "g", false, Action::kPass},
    {"include-path", "I", true, Action::kPass},
    {"system-include", "isystem", true, Action::kPass},
    {"pre-include", "include", true, Action::kPass},
    {"define-macro", "D", true, Action::kPass},
    {"undefine-macro", "U", true, Action::kPass},
    {"library-path", "L", true, Action::kPass},
    {"library", "l", true, Action::kPass},
    {"compiler-bindir", "ccbin", true, Action::kPass},
    {"allow-unsupported-compiler", nullptr, false, Action::kPass},
    {"std", nullptr, true, Action::kPass},
    {"optimize", "O", true, Action::kPass},
    {"dopt", nullptr, true, Action::kPass},
    {"x", nullptr, true, Action::kLanguage},
    {"machine", "m", true, Action::kPass},
    {"shared", nullptr, false, Action::kPass},
    {"cudart", nullptr, true, Action::kPass},
    {"cudadevrt", nullptr, true, Action::kPass},
    {"output-directory", "odir", true, Action::kPass},
    {"use_fast_math", nullptr, false, Action::kPass},
    {"ftz", nullptr, true, Action::kPass},
    {"prec-div", nullptr, true, Action::kPass},
    {"prec-sqrt", nullptr, true, Action::kPass},
    {"fmad", nullptr, true, Action::kPass},
    {"maxrregcount", nullptr, true, Action::kPass},
    {"expt-relaxed-constexpr", nullptr, false, Action::kPass},
    {"expt-extended-lambda", nullptr, false, Action::kPass},
    {"extended-lambda", nullptr, false, Action::kPass},
    {"default-stream", nullptr, true, Action::kPass},
    {"restrict", nullptr, false, Action::kPass},
    {"source-in-ptx", nullptr, false, Action::kPass},
    {"resource-usage", "res-usage", false, Action::kPass},
    {"extra-device-vectorization", nullptr, false, Action::kPass},
    {"static-global-template-stub", nullptr, true, Action::kPass},
    {"device-entity-has-hidden-visibility", nullptr, true, Action::kPass},
    {"display-error-number", nullptr, false, Action::kPass},
    {"no-display-error-number", nullptr, false, Action::kPass},
    {"diag-suppress", nullptr, true, Action::kPass},
    {"diag-error", nullptr, true, Action::kPass},
    {"diag-warn", nullptr, true, Action::kPass},
    {"disable-warnings", "w", false, Action::kPass},
    {"Werror", nullptr, true, Action::kPass},
    {"Wno-deprecated-gpu-targets", nullptr, false, Action::kPass},
    {"Wno-deprecated-declarations", nullptr, false, Action::kPass},
    {"Wreorder", nullptr, false, Action::kPass},
    {"Wdefault-stream-launch", nullptr, false, Action::kPass},
    {"Wmissing-launch-bounds", nullptr, false, Action::kPass},
    {"Wext-robust", nullptr, false, Action::kPass},
    {"device-w", "dw", false, Action::kRefuse, "-dw (device-only relocatable object)"},
    {"run", nullptr, false, Action::kRefuse, "-run executes the program"},
    {"cuda", nullptr, false, Action::kRefuse, "-cuda writes host C++ only"},
    {"optix-ir", nullptr, false, Action::kRefuse, "-optix-ir output"},
    {"dlink-time-opt", "dlto", false, Action::kRefuse, "link-time optimisation (-dlto)"},
    {"split-compile", nullptr, true, Action::kRefuse,
     "--split-compile changes how cicc/ptxas are driven"},
    {"keep", nullptr, false, Action::kRefuse, "--keep expects nvcc's intermediate files"},
    {"keep-dir", nullptr, true, Action::kRefuse, "--keep-dir expects nvcc's intermediate files"},
    {"save-temps", nullptr, false, Action::kRefuse, "--save-temps expects intermediate files"},
    {"dryrun", nullptr, false, Action::kRefuse, "--dryrun runs nothing"},
    {"verbose", "v", false, Action::kRefuse, "-v prints nvcc's own sub-commands"},
    {"time", nullptr, true, Action::kRefuse, "--time writes nvcc's own step timings"},
    // CMake passes these on every call. They cannot hide an option from us: an option this
    // table does not know makes the call not decomposable whether or not nvcc forwards it.
    {"forward-unknown-to-host-compiler", nullptr, false, Action::kPass},
    {"forward-unknown-to-host-linker", nullptr, false, Action::kPass},
    {"extensible-whole-program", "ewp", false, Action::kRefuse, "-ewp"},
};

// Short options nvcc also accepts with the value glued on: -I/usr/include, -DNDEBUG, -O3.
// The options of -MD/-MMD that only shape the dependency file written beside the object.
// --threads only schedules nvcc's own steps (and makes it redirect their output to files).
bool IsLeftOutOfSplit(Action action) {
  return action == Action::kDepsWithCompile || action == Action::kDepsWithCompileNonsystem ||
         action == Action::kDepFile || action == Action::kDepTarget ||
         action == Action::kDepPhony || action == Action::kThreads;
}

constexpr const char* kAttachedValueShortNames[] = {"I", "D", "U", "L", "l", "O", "m"};

const OptionSpec* FindOption(absl::string_view name) {
  for (const OptionSpec& spec : kOptions) {
    if (name == spec.long_name || (spec.short_name != nullptr && name == spec.short_name)) {
      return &spec;
    }
  }
  return nullptr;
}

absl::Status NotDecomposable(absl::string_view reason) {
  return absl::UnimplementedError(absl::StrCat("not decomposable: ", reason));
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
    if (spec == nullptr) return NotDecomposable(absl::StrCat("unknown nvcc option '", arg, "'"));
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
    if (!IsLeftOutOfSplit(spec->action)) {
      cmd.args_without_dependencies.insert(cmd.args_without_dependencies.end(),
                                           words.begin() + first, words.begin() + i + 1);
    }
  }
  return cmd;
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
  if (command.dependencies.with_compile &&
      (command.dependencies.file.empty() || command.dependencies.targets.empty())) {
    // nvcc derives the file and target names itself; only named ones are reproduced exactly.
    return NotDecomposable("-MD/-MMD without both -MF and -MT");
  }
  const std::string& input = command.inputs.front();
  if (command.device_debug) {
    // -G's DWARF records the directory cicc ran in: the worker's scratch dir, not the user's.
    return NotDecomposable("-G device debug info records the compiling directory");
  }
  if (command.line_info && !absl::StartsWith(input, "/")) {
    // Device debug info names the source as cicc finds it: relative to the worker's directory.
    return NotDecomposable("-lineinfo with a relative source path (CMake passes absolute ones)");
  }
  if (command.language.empty() ? !absl::EndsWith(input, ".cu") : command.language != "cu") {
    return NotDecomposable(absl::StrCat("'", input, "' is not a .cu file: no device code"));
  }
  return absl::OkStatus();
}

bool IsNotDecomposable(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnimplemented &&
         absl::StartsWith(status.message(), "not decomposable: ");
}

}  // namespace farm
