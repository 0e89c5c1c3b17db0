#include "libfarm/cc/cc_command_line.h"

#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace farm::cc {
namespace {

absl::string_view Basename(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// "dir/a.b.cc" -> "dir/a.b"; the suffix is the last '.' of the base name, if any (GCC's and
// clang's rule for default output names).
std::string WithoutSuffix(absl::string_view path) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == absl::string_view::npos || (slash != absl::string_view::npos && dot < slash)) {
    return std::string(path);
  }
  return std::string(path.substr(0, dot));
}

enum class Language { kNone, kC, kCxx };

// What a file name is by its suffix, when no -x says: a C or C++ source, or the reason it
// is not one farm-cc sends.
absl::StatusOr<Language> LanguageOfName(absl::string_view name) {
  absl::string_view base = Basename(name);
  size_t dot = base.rfind('.');
  absl::string_view suffix = dot == absl::string_view::npos ? "" : base.substr(dot);
  // .i/.ii are already preprocessed: the compile reads only them (and -M lists nothing).
  if (suffix == ".c" || suffix == ".i") return Language::kC;
  for (absl::string_view cxx : {".cc", ".cp", ".cxx", ".cpp", ".CPP", ".c++", ".C", ".ii"}) {
    if (suffix == cxx) return Language::kCxx;
  }
  for (absl::string_view header : {".h", ".hh", ".hpp", ".hxx", ".H", ".h++", ".tcc"}) {
    if (suffix == header) {
      return absl::FailedPreconditionError(
          absl::StrCat("header '", name, "' as input: writes a precompiled header"));
    }
  }
  if (suffix == ".s" || suffix == ".S" || suffix == ".sx") {
    return absl::FailedPreconditionError(absl::StrCat("assembler source '", name, "'"));
  }
  if (suffix == ".cu")
    return absl::FailedPreconditionError(absl::StrCat("CUDA source '", name, "'"));
  if (suffix == ".m" || suffix == ".mm" || suffix == ".M") {
    return absl::FailedPreconditionError(absl::StrCat("Objective-C source '", name, "'"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("'", name, "' is not a C or C++ source (a linker input?)"));
}

// Options that stop the driver before an object exists, or print something else instead.
std::optional<std::string> ModeReason(absl::string_view arg) {
  if (arg == "-E") return "-E: preprocessing only";
  if (arg == "-S") return "-S: assembly output only";
  if (arg == "-M" || arg == "-MM") return absl::StrCat(arg, ": dependencies only, no object");
  if (arg == "-fsyntax-only") return "-fsyntax-only: no object";
  if (arg == "-v" || arg == "-###") return absl::StrCat(arg, ": prints the driver's commands");
  if (arg == "--version" || arg == "--help" || absl::StartsWith(arg, "--help=") ||
      absl::StartsWith(arg, "-print-") || absl::StartsWith(arg, "--print-") ||
      absl::StartsWith(arg, "-dump")) {
    return absl::StrCat(arg, ": a query, not a compile");
  }
  return std::nullopt;
}

// Whether `value` names UTF-8, the charset GCC converts without loading iconv modules.
bool IsUtf8(absl::string_view value) {
  std::string lower = absl::AsciiStrToLower(value);
  return lower == "utf-8" || lower == "utf8";
}

// -f options (by their name after "-f", positive form) whose effect a sandboxed compile does
// not reproduce, by prefix. A "-fno-" form of these turns the feature off and passes.
struct Refused {
  absl::string_view prefix;
  absl::string_view reason;
};
constexpr std::array kRefusedF = {
    Refused{"lto", "LTO objects are not reproducible"},
    Refused{"plugin", "loads a compiler plugin"},
    Refused{"dump-", "writes dump files"},
    Refused{"stack-usage", "writes a .su file"},
    Refused{"callgraph-info", "writes a .ci file"},
    Refused{"profile-use", "reads profile data"},
    Refused{"profile-sample-use", "reads profile data"},
    Refused{"profile-instr-use", "reads profile data"},
    Refused{"auto-profile", "reads profile data"},
    Refused{"profile-list", "reads a profile list file"},
    Refused{"profile-note", "writes .gcno"},
    Refused{"test-coverage", "writes .gcno"},
    Refused{"save-optimization-record", "writes an optimization record"},
    Refused{"optimization-record-file", "writes an optimization record"},
    Refused{"time-trace", "writes a time trace"},
    Refused{"modules", "C++ modules need a module cache"},
    Refused{"module-", "C++ modules need a module cache"},
    Refused{"implicit-module", "C++ modules need a module cache"},
    Refused{"prebuilt-module", "C++ modules need a module cache"},
    Refused{"pch-", "precompiled headers"},
    Refused{"compare-debug", "compiles twice and writes .gk files"},
    Refused{"repo", "writes .rpo files"},
    Refused{"xray-attr-list", "reads an XRay list file"},
    Refused{"xray-always-instrument", "reads an XRay list file"},
    Refused{"xray-never-instrument", "reads an XRay list file"},
    Refused{"openmp-targets", "offloading runs more toolchains"},
    Refused{"syntax-only", "no object"},
};

// The reason an -f option stays local, or nullopt when it passes.
std::optional<std::string> RefusedFOption(absl::string_view arg) {
  absl::string_view name = arg.substr(2);
  if (name == "no-integrated-as" || name == "no-integrated-assembler") {
    return absl::StrCat(arg, ": runs the system assembler");
  }
  for (absl::string_view charset : {"input-charset=", "exec-charset=", "wide-exec-charset="}) {
    if (absl::StartsWith(name, charset) && !IsUtf8(name.substr(charset.size()))) {
      return absl::StrCat(arg, ": converting charsets loads iconv modules");
    }
  }
  if (absl::StartsWith(name, "opt-info") && absl::StrContains(name, '=')) {
    return absl::StrCat(arg, ": writes an optimization report file");
  }
  if (absl::StartsWith(name, "diagnostics-format=") && absl::EndsWith(name, "-file")) {
    return absl::StrCat(arg, ": writes a diagnostics file");
  }
  if (absl::StartsWith(name, "no-")) return std::nullopt;  // turns a feature off
  for (const Refused& refused : kRefusedF) {
    if (absl::StartsWith(name, refused.prefix)) {
      absl::string_view shown = arg;
      if (absl::StartsWith(refused.prefix, "dump-")) shown = "-fdump-...";
      return absl::StrCat(shown, ": ", refused.reason);
    }
  }
  return std::nullopt;
}

// -Wa, pieces farm-cc knows leave no file but the object and depend on nothing of the host.
bool KnownAssemblerOption(absl::string_view piece) {
  for (absl::string_view known :
       {"--noexecstack", "--compress-debug-sections", "-mrelax-relocations=",
        "--generate-missing-build-notes=", "-mx86-used-note=", "--64", "--32", "-mno-shared",
        "--nocompress-debug-sections", "--fatal-warnings", "-W", "--no-warn"}) {
    if (piece == known || (absl::StartsWith(piece, known) &&
                           (absl::EndsWith(known, "=") || piece[known.size()] == '='))) {
      return true;
    }
  }
  return false;
}

// The reason a -W... option stays local, or nullopt when it passes.
std::optional<std::string> RefusedWOption(absl::string_view arg) {
  if (absl::StartsWith(arg, "-Wp,")) {
    for (absl::string_view piece : absl::StrSplit(arg.substr(4), ',')) {
      if (!absl::StartsWith(piece, "-D") && !absl::StartsWith(piece, "-U")) {
        return absl::StrCat(arg, ": preprocessor option '", piece, "' not checked");
      }
    }
    return std::nullopt;
  }
  if (absl::StartsWith(arg, "-Wa,")) {
    for (absl::string_view piece : absl::StrSplit(arg.substr(4), ',')) {
      if (!KnownAssemblerOption(piece)) {
        return absl::StrCat(arg, ": assembler option '", piece, "' not checked");
      }
    }
    return std::nullopt;
  }
  if (absl::StartsWith(arg, "-Wl,")) return std::nullopt;  // linker options: -c ignores them
  // The sandbox holds only the directories of files the compile reads, so a -I directory
  // that exists here may be missing there: that warning would differ.
  if ((absl::StrContains(arg, "missing-include-dirs") && !absl::StartsWith(arg, "-Wno-")) ||
      arg == "-Weverything") {
    return absl::StrCat(arg, ": warns about -I directories the sandbox may not hold");
  }
  return std::nullopt;
}

// Options followed by a value, joined ("-DX", "-isystem/x") or as the next word, that pass.
// "-iwithprefixbefore" comes before "-iwithprefix", which is a prefix of it.
constexpr std::array<absl::string_view, 13> kValueOptions = {
    "-D",           "-U",        "-I",         "-include", "-imacros",
    "-isystem",     "-iquote",   "-idirafter", "-iprefix", "-iwithprefixbefore",
    "-iwithprefix", "-isysroot", "-imultilib"};

// Clang-only options with a value as the next word or after '='.
bool IsClangTargetOption(absl::string_view arg) {
  return arg == "-target" || absl::StartsWith(arg, "--target=");
}

struct ParseState {
  CompilerFamily family;
  std::optional<std::string> response_file;
  std::optional<std::string> mode_reason;
  std::optional<std::string> first_reason;  // the first refused or unknown option
  bool compile_only = false;                // -c
  bool write_depfile = false;               // -MD / -MMD
  std::string depfile_option;               // -MF
  std::vector<std::string> outputs;         // each -o
  bool reads_stdin = false;
  std::vector<std::string> sources;
  std::optional<std::string> source_reason;  // the first input that is not a source
  Language forced = Language::kNone;         // -x
  std::vector<std::string> scan_args;
  std::vector<std::string> include_dirs;

  void Refuse(std::string reason) {
    if (!first_reason) first_reason = std::move(reason);
  }
};

// Handles args[i] (and its value word, advancing `i`).
void ParseOne(const std::vector<std::string>& args, size_t& i, ParseState& state) {
  const std::string& arg = args[i];
  // The value of an option that takes one: joined after `name`, or the next word.
  auto value_of = [&](absl::string_view name, bool keep_for_scan) -> std::optional<std::string> {
    std::vector<std::string> words = {arg};
    std::optional<std::string> value;
    if (arg.size() > name.size()) {
      value = arg.substr(name.size());
      if (absl::StartsWith(name, "--") && absl::StartsWith(*value, "=")) value = value->substr(1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
      words.push_back(*value);
    } else {
      state.Refuse(absl::StrCat(arg, " without a value"));
    }
    if (keep_for_scan) state.scan_args.insert(state.scan_args.end(), words.begin(), words.end());
    return value;
  };

  if (arg.empty()) {
    state.Refuse("an empty argument");
    return;
  }
  if (arg[0] == '@') {
    if (!state.response_file) state.response_file = absl::StrCat("response file ", arg);
    return;
  }
  if (arg == "-") {
    state.reads_stdin = true;
    return;
  }
  if (arg[0] != '-') {
    state.scan_args.push_back(arg);
    if (state.forced == Language::kNone) {
      absl::StatusOr<Language> language = LanguageOfName(arg);
      if (!language.ok() && !state.source_reason) {
        state.source_reason = std::string(language.status().message());
      }
    }
    state.sources.push_back(arg);
    return;
  }
  if (std::optional<std::string> mode = ModeReason(arg)) {
    if (!state.mode_reason) state.mode_reason = std::move(mode);
    return;
  }
  if (arg == "-c") {
    state.compile_only = true;
    return;
  }
  if (absl::StartsWith(arg, "-o")) {
    if (std::optional<std::string> value = value_of("-o", false)) state.outputs.push_back(*value);
    return;
  }
  if (arg == "-MD" || arg == "-MMD") {
    state.write_depfile = true;
    return;
  }
  if (arg == "-MP") return;
  if (arg == "-MG") {
    state.Refuse("-MG: treats missing headers as generated");
    return;
  }
  if (absl::StartsWith(arg, "-MF")) {
    if (std::optional<std::string> value = value_of("-MF", false)) state.depfile_option = *value;
    return;
  }
  if (absl::StartsWith(arg, "-MT") || absl::StartsWith(arg, "-MQ")) {
    value_of(arg.substr(0, 3), false);
    return;
  }
  if (absl::StartsWith(arg, "-x")) {
    std::optional<std::string> value = value_of("-x", true);
    if (!value) return;
    if (*value == "c") {
      state.forced = Language::kC;
    } else if (*value == "c++") {
      state.forced = Language::kCxx;
    } else if (*value == "none") {
      state.forced = Language::kNone;
    } else if (absl::EndsWith(*value, "-header")) {
      state.Refuse(absl::StrCat("-x ", *value, ": writes a precompiled header"));
    } else {
      state.Refuse(absl::StrCat("-x ", *value));
    }
    return;
  }
  // Refused options that take a value: consume it, so it is not read as a source.
  for (absl::string_view name : {"-B", "-Xclang", "-Xpreprocessor", "-Xassembler", "-mllvm",
                                 "-include-pch", "-aux-info", "--gcc-toolchain"}) {
    if (arg == name || (name == "-B" && absl::StartsWith(arg, "-B")) ||
        (absl::StartsWith(name, "--") && absl::StartsWith(arg, absl::StrCat(name, "=")))) {
      std::optional<std::string> value =
          arg == name && i + 1 < args.size() ? std::optional<std::string>(args[++i]) : std::nullopt;
      if (name == "-B") {
        state.Refuse("-B: compiler programs from another directory");
      } else if (name == "-Xclang" || name == "-mllvm") {
        state.Refuse(absl::StrCat(name, " ", value.value_or(""), ": internal options not checked"));
      } else if (name == "--gcc-toolchain") {
        state.Refuse("--gcc-toolchain: selects another GCC installation");
      } else if (name == "-include-pch") {
        state.Refuse("-include-pch: precompiled headers");
      } else if (name == "-aux-info") {
        state.Refuse("-aux-info: writes a prototypes file");
      } else {
        state.Refuse(absl::StrCat(name, ": options passed through unchecked"));
      }
      return;
    }
  }
  if (arg == "-Xlinker") {  // linker options: -c ignores them
    value_of("-Xlinker", true);
    return;
  }
  for (absl::string_view name : kValueOptions) {
    if (absl::StartsWith(arg, name)) {  // "-include-pch" was handled above
      std::optional<std::string> value = value_of(name, true);
      if (value &&
          (name == "-I" || name == "-iquote" || name == "-isystem" || name == "-idirafter") &&
          *value != "-") {
        state.include_dirs.push_back(*value);
      }
      return;
    }
  }
  if (arg == "--param" || arg == "--sysroot") {
    value_of(arg, true);
    return;
  }
  if (absl::StartsWith(arg, "--param=") || absl::StartsWith(arg, "--sysroot=")) {
    state.scan_args.push_back(arg);
    return;
  }
  if (state.family == CompilerFamily::kClang && IsClangTargetOption(arg)) {
    if (arg == "-target") {
      value_of("-target", true);
    } else {
      state.scan_args.push_back(arg);
    }
    return;
  }
  state.scan_args.push_back(arg);
  if (absl::StartsWith(arg, "-specs") || absl::StartsWith(arg, "--specs")) {
    state.Refuse("-specs=: reads a specs file");
    return;
  }
  if (absl::StartsWith(arg, "-save-temps")) {
    state.Refuse("-save-temps");
    return;
  }
  if (arg == "--coverage") {
    state.Refuse("--coverage: writes .gcno");
    return;
  }
  if (arg == "-no-integrated-as") {
    state.Refuse("-no-integrated-as: runs the system assembler");
    return;
  }
  if (absl::StartsWith(arg, "-f")) {
    if (std::optional<std::string> reason = RefusedFOption(arg)) state.Refuse(*reason);
    return;
  }
  if (absl::StartsWith(arg, "-W")) {
    if (std::optional<std::string> reason = RefusedWOption(arg)) state.Refuse(*reason);
    return;
  }
  if (absl::StartsWith(arg, "-g")) {
    if (absl::StartsWith(arg, "-gsplit-dwarf")) state.Refuse("-gsplit-dwarf: writes a .dwo");
    if (arg == "-gmodules") state.Refuse("-gmodules: C++ modules need a module cache");
    return;
  }
  if (absl::StartsWith(arg, "-O")) return;
  if (absl::StartsWith(arg, "-m")) {
    for (absl::string_view tuning : {"-march=", "-mcpu=", "-mtune="}) {
      if (absl::StartsWith(arg, tuning) && arg.substr(tuning.size()) == "native") {
        state.Refuse(absl::StrCat(arg, ": depends on the build host's CPU"));
      }
    }
    return;
  }
  if (absl::StartsWith(arg, "-std=") || absl::StartsWith(arg, "--std=")) return;
  if (state.family == CompilerFamily::kClang &&
      (absl::StartsWith(arg, "-stdlib=") || absl::StartsWith(arg, "-rtlib=") ||
       absl::StartsWith(arg, "-unwindlib="))) {
    return;
  }
  for (absl::string_view known :
       {"-pthread", "-w", "-pedantic", "-pedantic-errors", "-ansi", "-pipe", "-nostdinc",
        "-nostdinc++", "-nostdlib", "-nostdlib++", "-nodefaultlibs", "-nostartfiles", "-undef",
        "-trigraphs", "-I-", "-no-pie", "-pie"}) {
    if (arg == known) return;
  }
  state.Refuse(absl::StrCat("unknown option '", arg, "'"));
}

absl::Status Refusal(const std::string& reason) { return absl::FailedPreconditionError(reason); }

}  // namespace

std::optional<CompilerFamily> CompilerFamilyOf(absl::string_view driver_path) {
  absl::string_view name = Basename(driver_path);
  // A version suffix: "-12", "-14.0".
  size_t dash = name.rfind('-');
  if (dash != absl::string_view::npos && dash + 1 < name.size() &&
      absl::ascii_isdigit(name[dash + 1]) &&
      name.substr(dash + 1).find_first_not_of("0123456789.") == absl::string_view::npos) {
    name = name.substr(0, dash);
  }
  // The longest tool names first, so "clang++" is not read as "c++" after "clang".
  for (auto [tool, family] : std::array<std::pair<absl::string_view, CompilerFamily>, 6>{
           {{"clang++", CompilerFamily::kClang},
            {"clang", CompilerFamily::kClang},
            {"g++", CompilerFamily::kGcc},
            {"gcc", CompilerFamily::kGcc},
            {"c++", CompilerFamily::kGcc},
            {"cc", CompilerFamily::kGcc}}}) {
    if (!absl::EndsWith(name, tool)) continue;
    absl::string_view prefix = name.substr(0, name.size() - tool.size());
    // A target triple before it ("x86_64-linux-gnu-"), or nothing.
    if (prefix.empty() || absl::EndsWith(prefix, "-")) return family;
    return std::nullopt;
  }
  return std::nullopt;
}

std::vector<std::string> CcCompilePlan::DependencyScanArgs(const std::string& scan_output) const {
  std::vector<std::string> args = scan_base_args;
  args.insert(args.end(), {"-M", "-MT", kScanTarget, "-MF", scan_output});
  return args;
}

absl::StatusOr<CcCompilePlan> PlanRemoteCompile(const std::vector<std::string>& args,
                                                CompilerFamily family) {
  ParseState state{.family = family};
  for (size_t i = 0; i < args.size(); ++i) ParseOne(args, i, state);

  if (state.response_file) return Refusal(*state.response_file);
  if (state.mode_reason) return Refusal(*state.mode_reason);
  if (!state.compile_only) return Refusal("not a compile (no -c): a link");
  if (state.first_reason) return Refusal(*state.first_reason);
  if (state.reads_stdin) return Refusal("reads standard input");
  if (state.sources.empty()) return Refusal("no source file");
  if (state.sources.size() > 1) {
    return Refusal(absl::StrCat(state.sources.size(), " source files"));
  }
  if (state.source_reason) return Refusal(*state.source_reason);
  if (state.outputs.size() > 1) return Refusal(absl::StrCat(state.outputs.size(), " -o options"));

  CcCompilePlan plan;
  plan.family = family;
  plan.source = state.sources[0];
  if (!state.outputs.empty()) {
    plan.object = state.outputs[0];
    if (plan.object == "-") return Refusal("-o -: writes the object to standard output");
  } else {
    plan.object = WithoutSuffix(Basename(plan.source)) + ".o";
  }
  if (state.write_depfile) {
    // GCC's and clang's rule: -MF, else the -o name with its suffix replaced by .d, else the
    // source's base name with .d, in the working directory.
    if (!state.depfile_option.empty()) {
      plan.depfile = state.depfile_option;
    } else if (!state.outputs.empty()) {
      plan.depfile = WithoutSuffix(plan.object) + ".d";
    } else {
      plan.depfile = WithoutSuffix(Basename(plan.source)) + ".d";
    }
  }
  plan.scan_base_args = std::move(state.scan_args);
  plan.include_dirs = std::move(state.include_dirs);
  return plan;
}

}  // namespace farm::cc
