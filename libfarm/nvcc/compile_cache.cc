#include "libfarm/nvcc/compile_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libfarm/digest/digest.h"
#include "libfarm/digest/sha256.h"
#include "libfarm/nvcc/shell_words.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/path_search.h"
#include "libfarm/text/utf8.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

// Bumped when what the key covers changes, or when entries already recorded may hold wrong
// bytes. 2: the working directory and the output names only when they reach the outputs,
// the source's real path, outputs recorded by role. 3: -lineinfo objects of units that read
// more than 4096 files were recorded with unstamped line tables.
constexpr char kKeyVersion[] = "farm-nvcc compile cache 3";

constexpr char kOutputPlaceholder[] = "<the object>";
constexpr char kDependencyFilePlaceholder[] = "<the dependency file>";

// nvcc and its host compiler are identified cheaply by path, size and mtime, as ccache does.
std::string ToolIdentity(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return absl::StrCat(path, " missing");
  return absl::StrCat(path, " ", st.st_size, " ", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
}

void AddField(Sha256& hash, absl::string_view name, absl::string_view value) {
  // Length-prefixed, so no two field lists hash alike.
  hash.Update(absl::StrCat(name.size(), ":", name, "=", value.size(), ":"));
  hash.Update(value);
}

// The environment nvcc and its preprocessors read; the values are in the key.
constexpr const char* kEnvironment[] = {
    "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS",  "NVCC_CCBIN", "CPATH",
    "C_INCLUDE_PATH",     "CPLUS_INCLUDE_PATH", "CUDA_HOME",  "PATH"};
// Of those, the ones holding paths (':'-separated lists; an empty entry is the directory).
constexpr const char* kPathEnvironment[] = {"NVCC_CCBIN",         "CPATH",     "C_INCLUDE_PATH",
                                            "CPLUS_INCLUDE_PATH", "CUDA_HOME", "PATH"};

// The option name of an nvcc-style word ("--output-file=x" -> "output-file"), or "".
std::string OptionName(absl::string_view word) {
  if (word.size() < 2 || word[0] != '-') return "";
  word.remove_prefix(absl::StartsWith(word, "--") ? 2 : 1);
  return std::string(word.substr(0, word.find('=')));
}

enum class WordRole { kOther, kOutput, kDependencyFile, kDependencyTarget, kPath };

// What the value of option `name` is. nvcc accepts either dash count for any option.
WordRole ValueRole(absl::string_view name) {
  if (name == "o" || name == "output-file") return WordRole::kOutput;
  if (name == "MF" || name == "dependency-output") return WordRole::kDependencyFile;
  if (name == "MT" || name == "dependency-target-name") return WordRole::kDependencyTarget;
  static constexpr absl::string_view kPathOptions[] = {"I",          "include-path",
                                                       "isystem",    "system-include",
                                                       "include",    "pre-include",
                                                       "L",          "library-path",
                                                       "ccbin",      "compiler-bindir",
                                                       "odir",       "output-directory",
                                                       "ldir",       "libdevice-directory",
                                                       "target-dir", "target-directory",
                                                       "optf",       "options-file",
                                                       "iquote",     "idirafter",
                                                       "imacros",    "isysroot",
                                                       "sysroot",    "B"};
  for (absl::string_view p : kPathOptions) {
    if (name == p) return WordRole::kPath;
  }
  return WordRole::kOther;
}

// Options whose value may be glued on (-Iinclude, -isystemdir): gcc's and nvcc's spellings.
constexpr absl::string_view kGluedPathOptions[] = {
    "isystem", "iquote", "idirafter", "imacros", "include", "isysroot", "I", "L", "B"};

bool IsRelativePath(absl::string_view path) { return !path.empty() && path[0] != '/'; }

// Whether `word`, an argument that is not a known option's path value, may name a relative
// path: itself, any piece after '=' or ',' (-Xcompiler=-fplugin=./p.so,-Iinc), or a glued
// path option's value. A piece counts when it holds a '/' or names something that exists in
// `cwd`; a false alarm only keeps the working directory in the key.
bool MayNameRelativePath(const std::string& word, const std::string& cwd) {
  std::vector<std::string> pieces = {word};
  for (absl::string_view piece : absl::StrSplit(word, absl::ByAnyChar("=,"), absl::SkipEmpty())) {
    pieces.emplace_back(piece);
  }
  for (const std::string& piece : pieces) {
    absl::string_view p = piece;
    if (absl::ConsumePrefix(&p, "-")) {
      for (absl::string_view option : kGluedPathOptions) {
        if (absl::StartsWith(p, option) && p.size() > option.size() &&
            IsRelativePath(p.substr(option.size()))) {
          return true;
        }
      }
      continue;
    }
    if (p.empty() || p[0] == '/') continue;
    if (absl::StrContains(p, '/')) return true;
    std::error_code ec;
    if (fs::exists(fs::symlink_status(fs::path(cwd) / std::string(p), ec))) return true;
  }
  return false;
}

// `args` with the -o and -MF values replaced by placeholders, and whether one of the other
// words names a relative path (in `relative`, the first such word).
struct ScannedArgs {
  std::vector<std::string> with_placeholders;
  std::optional<std::string> relative;
};

ScannedArgs ScanArgs(const std::vector<std::string>& args, const std::string& cwd) {
  ScannedArgs out;
  auto note_relative = [&](const std::string& word) {
    if (!out.relative) out.relative = word;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    const std::string name = OptionName(word);
    const WordRole role = ValueRole(name);
    const bool inline_value = absl::StrContains(word, '=');
    if (role == WordRole::kOther || name.empty()) {
      if (MayNameRelativePath(word, cwd)) note_relative(word);
      out.with_placeholders.push_back(word);
      continue;
    }
    std::string value;
    if (inline_value) {
      value = word.substr(word.find('=') + 1);
    } else if (i + 1 < args.size()) {
      out.with_placeholders.push_back(word);
      value = args[++i];
    } else {
      out.with_placeholders.push_back(word);
      continue;
    }
    const std::string prefix = inline_value ? word.substr(0, word.find('=') + 1) : "";
    switch (role) {
      case WordRole::kOutput:
        out.with_placeholders.push_back(prefix + kOutputPlaceholder);
        break;
      case WordRole::kDependencyFile:
        out.with_placeholders.push_back(prefix + kDependencyFilePlaceholder);
        break;
      case WordRole::kPath:
        if (IsRelativePath(value)) note_relative(word + (inline_value ? "" : " " + value));
        out.with_placeholders.push_back(prefix + value);
        break;
      default:  // a dependency target: text in the dependency file, never read
        out.with_placeholders.push_back(prefix + value);
        break;
    }
  }
  return out;
}

// Why the outputs may embed the names of the files the compile writes (and its working
// directory), or nullopt. Debug info, profiling, dumps and recorded switches name files
// after the object or record the directory; -G and -lineinfo given to ptxas likewise.
std::optional<std::string> NamingReason(const NvccCommandLine& command) {
  if (command.device_debug) return "-G";
  for (const std::string& arg : command.args) {
    const std::string name = OptionName(arg);
    if (name == "g" || name == "debug" || name == "pg" || name == "profile") return arg;
  }
  static constexpr absl::string_view kHostPrefixes[] = {
      "-g",       "-pg",         "--coverage",    "-fprofile",        "-ftest-coverage",
      "-fdump",   "-save-temps", "-fstack-usage", "-fcallgraph-info", "-flto",
      "-frecord", "-Wa,",        "-fdebug",       "-fplugin",         "-dump",
      "-aux",     "-specs",      "--debug"};
  std::vector<std::string> host = command.compiler_options;
  host.insert(host.end(), command.unknown_options.begin(), command.unknown_options.end());
  for (const std::string& word : host) {
    for (absl::string_view prefix : kHostPrefixes) {
      if (absl::StartsWith(word, prefix)) return word;
    }
    if (absl::StrContains(word, "prefix-map")) return word;
  }
  for (const std::string& word : command.ptxas_options) {
    if (absl::StartsWith(word, "-g") || absl::StartsWith(word, "--device-debug") ||
        absl::StrContains(word, "line-info") || absl::StrContains(word, "lineinfo")) {
      return word;
    }
  }
  return std::nullopt;
}

// The NVCC_PREPEND_FLAGS and NVCC_APPEND_FLAGS words, parsed, when set and readable.
std::vector<NvccCommandLine> EnvironmentFlags() {
  std::vector<NvccCommandLine> parsed;
  for (const char* variable : {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"}) {
    const std::string value = GetEnv(variable);
    if (value.empty()) continue;
    auto words = SplitShellWords(value);
    if (!words.ok()) continue;
    auto flags = ParseNvccCommandLine(*words);
    if (flags.ok()) parsed.push_back(*std::move(flags));
  }
  return parsed;
}

// A dependency as the entry records it (a hex sha256, as the coordinator requires): its
// content's, or with line info that of its content's hash, mtime and size together.
absl::StatusOr<std::string> DependencyFingerprint(const std::string& path, bool with_stamp) {
  auto digest = DigestOfFile(path);
  if (!digest.ok()) return digest.status();
  if (!with_stamp) return digest->hash();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return absl::NotFoundError(absl::StrCat("cannot stat ", path));
  Sha256 stamped;
  stamped.Update(absl::StrCat(digest->hash(), " mtime=", st.st_mtim.tv_sec, " size=", st.st_size));
  return stamped.FinishHex();
}

}  // namespace

CompileKeyScope CompileKeyScopeOf(const NvccCommandLine& command, const std::string& cwd) {
  CompileKeyScope scope;
  scope.source_stamps = command.line_info;
  std::optional<std::string> naming = NamingReason(command);
  std::optional<std::string> relative = ScanArgs(command.args, cwd).relative;
  for (const NvccCommandLine& flags : EnvironmentFlags()) {
    scope.source_stamps = scope.source_stamps || flags.line_info;
    if (!naming) naming = NamingReason(flags);
    if (!relative) relative = ScanArgs(flags.args, cwd).relative;
  }
  if (naming) {
    scope.output_names = absl::StrCat(*naming, " may record the object's name");
    scope.working_directory = absl::StrCat(*naming, " may record the working directory");
    return scope;
  }
  if (relative) {
    scope.working_directory = absl::StrCat("'", *relative, "' is a relative path");
    return scope;
  }
  for (const char* name : kPathEnvironment) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    for (absl::string_view entry : absl::StrSplit(value, ':')) {
      if (entry.empty() || entry[0] != '/') {
        scope.working_directory = absl::StrCat(name, " holds a relative entry");
        return scope;
      }
    }
  }
  return scope;
}

absl::StatusOr<CompileKey> CompileCacheKey(const std::string& nvcc,
                                           const NvccCommandLine& command) {
  if (command.inputs.size() != 1) {
    return absl::UnimplementedError("the compile cache takes one source file");
  }
  auto source = DigestOfFile(command.inputs[0]);
  if (!source.ok()) return source.status();
  std::error_code ec;
  const std::string cwd = fs::current_path(ec).string();
  if (ec) return absl::InternalError("cannot read the working directory");
  // nvcc's module id, in every internal-linkage symbol name of the object and its device
  // code, hashes the source's real path (symlinks resolved).
  const std::string real_source = fs::canonical(command.inputs[0], ec).string();
  if (ec) return absl::NotFoundError(absl::StrCat("cannot resolve ", command.inputs[0]));

  CompileKey key;
  key.scope = CompileKeyScopeOf(command, cwd);
  if (!key.scope.working_directory && IsRelativePath(nvcc)) {
    key.scope.working_directory = "nvcc is named by a relative path";
  }
  std::vector<std::string> args = command.args;
  if (!key.scope.output_names) {
    // Only when a parse of the words with placeholders finds them where the output and the
    // dependency file were: a placeholder anywhere else would drop a word that matters.
    std::vector<std::string> placed = ScanArgs(command.args, cwd).with_placeholders;
    auto reparsed = ParseNvccCommandLine(placed);
    const bool explicit_file = std::any_of(
        command.args.begin(), command.args.end(),
        [](const std::string& a) { return ValueRole(OptionName(a)) == WordRole::kDependencyFile; });
    if (reparsed.ok() && reparsed->output == kOutputPlaceholder &&
        reparsed->inputs == command.inputs &&
        (!explicit_file || reparsed->dependencies.file == kDependencyFilePlaceholder)) {
      args = std::move(placed);
    } else {
      // The scan that cleared the working directory misread the words as well.
      key.scope.output_names = "the output options could not be told apart";
      key.scope.working_directory = key.scope.output_names;
    }
  }

  Sha256 hash;
  AddField(hash, "version", kKeyVersion);
  AddField(hash, "nvcc", ToolIdentity(nvcc));
  const std::string path = GetEnv("PATH");
  for (const char* host : {"gcc", "g++", "cc", "c++"}) {
    AddField(hash, host, ToolIdentity(FindOnPath(host, path).value_or("")));
  }
  AddField(hash, "cwd", key.scope.working_directory ? cwd : "<not read>");
  AddField(hash, "names", key.scope.output_names ? "as given" : "placeholders");
  for (const std::string& arg : args) AddField(hash, "arg", arg);
  if (command.dependencies.with_compile) {
    // The dependency file's targets: -MT, or by default the object's name.
    for (const std::string& target : command.dependencies.targets) {
      AddField(hash, "dependency target", target);
    }
  }
  for (const char* name : kEnvironment) {
    const char* value = std::getenv(name);
    AddField(hash, name, value == nullptr ? "<unset>" : value);
  }
  AddField(hash, "source", source->hash());
  AddField(hash, "source real path", real_source);
  AddField(hash, "source stamps", key.scope.source_stamps ? "recorded" : "not recorded");
  key.key = hash.FinishHex();
  return key;
}

std::vector<std::string> IncludedFiles(const std::vector<LineMarkerFile>& marked_files,
                                       const std::string& skip_dir) {
  std::set<std::string> files;
  for (const LineMarkerFile& marked : marked_files) {
    std::error_code ec;
    std::string file = fs::absolute(marked.path, ec).lexically_normal().string();
    if (ec) continue;
    if (!skip_dir.empty() && absl::StartsWith(file, skip_dir + "/")) continue;
    files.insert(std::move(file));
  }
  return {files.begin(), files.end()};
}

std::vector<CompileCacheOutput> CompileCacheOutputs(const NvccCommandLine& command) {
  std::vector<CompileCacheOutput> outputs = {{kObjectRole, command.output}};
  if (command.dependencies.with_compile && !command.dependencies.file.empty()) {
    outputs.push_back({kDependencyFileRole, command.dependencies.file});
  }
  return outputs;
}

absl::Status CheckRestorableOutputs(const farm::v1::CompileResult& entry,
                                    const std::vector<std::string>& expected_roles) {
  const std::set<std::string> allowed(expected_roles.begin(), expected_roles.end());
  std::set<std::string> seen;
  for (const auto& out : entry.outputs()) {
    // An honest entry names each output by its role: a restore writes to this call's path
    // for that role, never to a path from the entry.
    if (!allowed.contains(out.path())) {
      return absl::PermissionDeniedError(absl::StrCat(
          "compile cache entry refused: it would write '", out.path(),
          "', which this nvcc call does not name as an output. Fix: find who can write to the "
          "farm's compile cache with the farm token; the compile runs normally"));
    }
    if (!seen.insert(out.path()).second) {
      return absl::PermissionDeniedError(
          absl::StrCat("compile cache entry refused: it lists '", out.path(), "' twice"));
    }
  }
  for (const std::string& role : allowed) {
    if (!seen.contains(role)) {
      return absl::PermissionDeniedError(absl::StrCat(
          "compile cache entry refused: it does not restore '", role, "', which this call writes"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<farm::v1::CompileResult>> CompileCache::Restore(
    const CompileKey& key, const std::vector<CompileCacheOutput>& outputs) {
  auto entry = actions_->GetCompileResult(key.key);
  if (!entry.ok()) {
    if (entry.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    return entry.status();
  }
  // Checked before anything else: nothing is written unless every role is ours.
  std::vector<std::string> roles;
  for (const CompileCacheOutput& out : outputs) roles.push_back(out.role);
  if (absl::Status s = CheckRestorableOutputs(*entry, roles); !s.ok()) return s;
  for (const auto& dep : entry->dependencies()) {
    auto now = DependencyFingerprint(dep.path(), key.scope.source_stamps);
    if (!now.ok() || *now != dep.sha256()) return std::nullopt;
  }
  for (const auto& recorded : entry->outputs()) {
    for (const CompileCacheOutput& out : outputs) {
      if (out.role != recorded.path()) continue;
      if (absl::Status s = cas_->DownloadToFile(recorded.digest(), out.path); !s.ok()) return s;
    }
  }
  return *std::move(entry);
}

absl::Status CompileCache::Record(const CompileKey& key,
                                  const std::vector<std::string>& dependencies,
                                  const std::vector<CompileCacheOutput>& outputs,
                                  const std::string& stdout_text, const std::string& stderr_text) {
  // A hit replays the output byte for byte, and the coordinator takes UTF-8 text only: such a
  // compile is not cached (it ran and printed all it said; only the shortcut is lost).
  const bool paths_utf8 = std::all_of(dependencies.begin(), dependencies.end(),
                                      [](const std::string& p) { return IsValidUtf8(p); });
  if (!paths_utf8 || !IsValidUtf8(stdout_text) || !IsValidUtf8(stderr_text)) {
    return absl::FailedPreconditionError(
        "its output or a dependency's path is not UTF-8, which a cache entry cannot hold");
  }
  farm::v1::CompileResult result;
  for (const std::string& path : dependencies) {
    auto fingerprint = DependencyFingerprint(path, key.scope.source_stamps);
    if (!fingerprint.ok()) return fingerprint.status();
    auto* dep = result.add_dependencies();
    dep->set_path(path);
    dep->set_sha256(*fingerprint);
  }
  for (const CompileCacheOutput& out : outputs) {
    auto digest = cas_->UploadFile(out.path);
    if (!digest.ok()) return digest.status();
    auto* recorded = result.add_outputs();
    recorded->set_path(out.role);
    *recorded->mutable_digest() = *digest;
  }
  result.set_stdout_text(stdout_text);
  result.set_stderr_text(stderr_text);
  return actions_->PutCompileResult(key.key, result);
}

}  // namespace farm
