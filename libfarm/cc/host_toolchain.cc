#include "libfarm/cc/host_toolchain.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <system_error>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "libfarm/cc/file_tree_builder.h"
#include "libfarm/cc/loader_closure.h"
#include "libfarm/digest/digest.h"
#include "libfarm/elf/elf_file.h"
#include "libfarm/elf/mapped_file.h"
#include "libfarm/file_tree/file_tree.h"
#include "libfarm/files/json_file.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/path_search.h"
#include "libfarm/process/subprocess.h"

namespace farm::cc {

namespace {

constexpr absl::Duration kProbeTimeout = absl::Seconds(60);
constexpr int kCacheFormat = 1;

// Files clang reads to tell the Linux distribution (clang/lib/Driver/Distro.cpp).
constexpr const char* kDistroFiles[] = {
    "/etc/os-release",     "/usr/lib/os-release", "/etc/lsb-release",    "/etc/redhat-release",
    "/etc/debian_version", "/etc/SuSE-release",   "/etc/alpine-release", "/etc/arch-release",
    "/etc/gentoo-release", "/etc/exherbo-release"};

bool IsRegularFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

absl::StatusOr<std::string> AbsoluteCompiler(const std::string& compiler_path) {
  if (compiler_path.empty()) return absl::InvalidArgumentError("no compiler path");
  if (compiler_path.find('/') == std::string::npos) {
    std::optional<std::string> found = FindOnPath(compiler_path, GetEnv("PATH"));
    if (!found) {
      return absl::NotFoundError(
          absl::StrCat(compiler_path, " is not on PATH. Fix: install it or name its path"));
    }
    return *found;
  }
  if (compiler_path[0] == '/') return compiler_path;
  char buffer[4096];
  if (getcwd(buffer, sizeof(buffer)) == nullptr) {
    return absl::InternalError("cannot read the working directory");
  }
  return absl::StrCat(buffer, "/", compiler_path);
}

// A command that must succeed; an error names it.
absl::StatusOr<CommandResult> Probe(const std::vector<std::string>& argv) {
  absl::StatusOr<CommandResult> result = RunCommand(argv, kProbeTimeout);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        absl::StrJoin(argv, " "), " failed (exit ", result->exit_code, "): ", result->stderr_text));
  }
  return result;
}

absl::StatusOr<CompilerFamily> AskFamily(const std::string& compiler) {
  absl::StatusOr<CommandResult> version = Probe({compiler, "--version"});
  if (!version.ok()) return version.status();
  if (absl::StrContains(version->stdout_text, "clang version")) return CompilerFamily::kClang;
  if (absl::StrContains(version->stdout_text, "Free Software Foundation")) {
    return CompilerFamily::kGcc;
  }
  return absl::FailedPreconditionError(
      absl::StrCat(compiler, " --version names neither GCC nor clang"));
}

// The program a gcc driver runs for `name`: -print-prog-name prints an absolute path when the
// driver's own directories hold it, else the bare name, which the driver finds on PATH.
std::optional<std::string> GccProgram(const std::string& compiler, const std::string& name) {
  absl::StatusOr<CommandResult> printed = Probe({compiler, "-print-prog-name=" + name});
  if (!printed.ok()) return std::nullopt;
  std::string path(absl::StripAsciiWhitespace(printed->stdout_text));
  if (!path.empty() && path[0] == '/') {
    if (IsRegularFile(path)) return path;
    return std::nullopt;
  }
  if (path.empty() || path.find('/') != std::string::npos) return std::nullopt;
  return FindOnPath(path, GetEnv("PATH"));
}

absl::Status AddGccPrograms(const std::string& compiler, HostToolchainFiles& files) {
  for (const char* name : {"cc1", "cc1plus", "as"}) {
    if (std::optional<std::string> program = GccProgram(compiler, name)) {
      files.paths.push_back(*program);
    }
  }
  bool has_proper = false;
  for (const std::string& path : files.paths) {
    has_proper = has_proper || absl::EndsWith(path, "/cc1") || absl::EndsWith(path, "/cc1plus");
  }
  if (!has_proper) {
    return absl::FailedPreconditionError(
        absl::StrCat(compiler, " -print-prog-name finds neither cc1 nor cc1plus"));
  }
  absl::StatusOr<CommandResult> specs = Probe({compiler, "-print-file-name=specs"});
  if (specs.ok()) {
    std::string path(absl::StripAsciiWhitespace(specs->stdout_text));
    if (!path.empty() && path[0] == '/' && IsRegularFile(path)) files.paths.push_back(path);
  }
  return absl::OkStatus();
}

absl::Status AddClangFiles(const std::string& compiler, HostToolchainFiles& files) {
  absl::StatusOr<CommandResult> verbose = Probe({compiler, "-v", "-E", "-x", "c", "/dev/null"});
  if (!verbose.ok()) return verbose.status();
  constexpr absl::string_view kSelected = "Selected GCC installation: ";
  for (absl::string_view line : absl::StrSplit(verbose->stderr_text, '\n')) {
    if (!absl::ConsumePrefix(&line, kSelected)) continue;
    std::string dir(absl::StripAsciiWhitespace(line));
    std::string crtbegin = dir + "/crtbegin.o";
    if (IsRegularFile(crtbegin)) files.paths.push_back(crtbegin);
    // A newer GCC installed beside it would be selected instead.
    files.watched_directories.push_back(dir + "/..");
  }
  for (const char* distro_file : kDistroFiles) {
    if (IsRegularFile(distro_file)) files.paths.push_back(distro_file);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CpuArchOf(const std::string& path) {
  absl::StatusOr<MappedFile> file = MappedFile::Open(path);
  if (!file.ok()) return file.status();
  absl::StatusOr<ElfFile> elf = ElfFile::Parse(file->bytes());
  if (!elf.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not an ELF program (a wrapper script?): ", elf.status().message()));
  }
  return ElfMachineName(elf->machine());
}

// lstat's mtime (ns) and size of `path`, or -1s when it is gone.
std::pair<int64_t, int64_t> Stamp(const std::string& path) {
  struct stat info;
  if (lstat(path.c_str(), &info) != 0) return {-1, -1};
  return {absl::ToUnixNanos(absl::TimeFromTimespec(info.st_mtim)), info.st_size};
}

std::vector<std::string> StampedPaths(const HostToolchainFiles& files) {
  std::vector<std::string> paths;
  for (const farm::v1::InputFile& entry : files.tree.files()) paths.push_back("/" + entry.path());
  paths.insert(paths.end(), files.watched_directories.begin(), files.watched_directories.end());
  return paths;
}

nlohmann::json ToJson(const HostToolchainFiles& files) {
  nlohmann::json json;
  json["format"] = kCacheFormat;
  json["compiler"] = files.compiler;
  json["cpu_arch"] = files.cpu_arch;
  json["family"] = files.family == CompilerFamily::kClang ? "clang" : "gcc";
  json["paths"] = files.paths;
  json["watched_directories"] = files.watched_directories;
  nlohmann::json entries = nlohmann::json::array();
  for (const farm::v1::InputFile& entry : files.tree.files()) {
    entries.push_back({entry.path(), entry.digest().hash(), entry.digest().size_bytes(),
                       entry.executable(), entry.symlink_target()});
  }
  json["tree"] = entries;
  nlohmann::json stamps = nlohmann::json::array();
  for (const std::string& path : StampedPaths(files)) {
    auto [mtime, size] = Stamp(path);
    stamps.push_back({path, mtime, size});
  }
  json["stamps"] = stamps;
  return json;
}

// The cached discovery when it is still valid, else nullopt.
std::optional<HostToolchainFiles> FromJson(const nlohmann::json& json,
                                           const std::string& compiler) {
  try {
    if (json.at("format").get<int>() != kCacheFormat ||
        json.at("compiler").get<std::string>() != compiler) {
      return std::nullopt;
    }
    for (const nlohmann::json& stamp : json.at("stamps")) {
      auto [mtime, size] = Stamp(stamp.at(0).get<std::string>());
      if (mtime < 0 || mtime != stamp.at(1).get<int64_t>() || size != stamp.at(2).get<int64_t>()) {
        return std::nullopt;
      }
    }
    HostToolchainFiles files;
    files.compiler = compiler;
    files.cpu_arch = json.at("cpu_arch").get<std::string>();
    files.family = json.at("family").get<std::string>() == "clang" ? CompilerFamily::kClang
                                                                   : CompilerFamily::kGcc;
    files.paths = json.at("paths").get<std::vector<std::string>>();
    files.watched_directories = json.at("watched_directories").get<std::vector<std::string>>();
    for (const nlohmann::json& entry : json.at("tree")) {
      farm::v1::InputFile* file = files.tree.add_files();
      file->set_path(entry.at(0).get<std::string>());
      std::string target = entry.at(4).get<std::string>();
      if (!target.empty()) {
        file->set_symlink_target(target);
      } else {
        file->mutable_digest()->set_hash(entry.at(1).get<std::string>());
        file->mutable_digest()->set_size_bytes(entry.at(2).get<int64_t>());
        file->set_executable(entry.at(3).get<bool>());
      }
    }
    files.tree_digest = FileTreeDigest(files.tree);
    return files;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // an older or damaged cache file: discover again
  }
}

}  // namespace

absl::StatusOr<HostToolchainFiles> DiscoverHostToolchain(const std::string& compiler_path) {
  absl::StatusOr<std::string> compiler = AbsoluteCompiler(compiler_path);
  if (!compiler.ok()) return compiler.status();
  HostToolchainFiles files;
  files.compiler = *compiler;
  absl::StatusOr<std::string> arch = CpuArchOf(*compiler);
  if (!arch.ok()) return arch.status();
  files.cpu_arch = *arch;
  absl::StatusOr<CompilerFamily> family = AskFamily(*compiler);
  if (!family.ok()) return family.status();
  files.family = *family;

  files.paths.push_back(*compiler);
  absl::Status programs = files.family == CompilerFamily::kGcc ? AddGccPrograms(*compiler, files)
                                                               : AddClangFiles(*compiler, files);
  if (!programs.ok()) return programs;

  // The loader and libraries of every program among them (crtbegin.o, specs and the like are
  // not programs).
  std::vector<std::string> programs_found = files.paths;
  std::set<std::string> listed(files.paths.begin(), files.paths.end());
  for (const std::string& program : programs_found) {
    if (access(program.c_str(), X_OK) != 0 || !CpuArchOf(program).ok()) continue;
    absl::StatusOr<std::vector<std::string>> closure = LoaderClosure(program);
    if (!closure.ok()) return closure.status();
    for (const std::string& path : *closure) {
      if (listed.insert(path).second) files.paths.push_back(path);
    }
  }
  if (IsRegularFile("/etc/ld.so.cache")) files.paths.push_back("/etc/ld.so.cache");

  FileTreeBuilder builder;
  for (const std::string& path : files.paths) {
    if (absl::Status added = builder.Add(path, "/"); !added.ok()) return added;
  }
  files.tree = builder.Tree();
  files.tree_digest = FileTreeDigest(files.tree);
  return files;
}

absl::StatusOr<HostToolchainFiles> CachedHostToolchain(const std::string& compiler_path,
                                                       const std::string& cache_dir) {
  absl::StatusOr<std::string> compiler = AbsoluteCompiler(compiler_path);
  if (!compiler.ok()) return compiler.status();
  std::string key = absl::StrCat(*compiler, "\n", GetEnv("PATH"), "\n", GetEnv("LD_LIBRARY_PATH"),
                                 "\n", GetEnv("COMPILER_PATH"), "\n", GetEnv("GCC_EXEC_PREFIX"));
  std::string cache_file =
      absl::StrCat(cache_dir, "/toolchain-", DigestOfBytes(key).hash().substr(0, 32), ".json");
  if (absl::StatusOr<nlohmann::json> cached = ReadJsonFile(cache_file); cached.ok()) {
    if (std::optional<HostToolchainFiles> files = FromJson(*cached, *compiler)) return *files;
  }
  absl::StatusOr<HostToolchainFiles> files = DiscoverHostToolchain(*compiler);
  if (!files.ok()) return files.status();
  std::error_code error;
  std::filesystem::create_directories(cache_dir, error);
  // A cache that cannot be written costs the next call a discovery, nothing more.
  (void)WriteJsonFileAtomically(cache_file, ToJson(*files));
  return files;
}

}  // namespace farm::cc
