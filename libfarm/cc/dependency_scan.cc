#include "libfarm/cc/dependency_scan.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "libfarm/cc/make_dependencies.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/process/environment.h"
#include "libfarm/process/subprocess.h"

namespace farm::cc {
namespace {

// A heavy C++ TU preprocesses in seconds; this only stops a hung compiler.
constexpr absl::Duration kScanTimeout = absl::Minutes(10);

std::string TempDirectory() { return GetEnvOr("TMPDIR", "/tmp"); }

// Whether `dir` is the directory this process runs in (so no `cd` is needed).
bool IsCurrentDirectory(const std::string& dir) {
  char buffer[4096];
  return getcwd(buffer, sizeof(buffer)) != nullptr && dir == buffer;
}

// Runs `compiler args` in `cwd`. Its search list (-v) is read in English: a translated GCC
// ("... beginnt hier:") would leave it unknown. Only the messages: LC_ALL, which would
// override them, becomes LC_CTYPE, so the input charset stays the call's; gettext ignores
// LANGUAGE once LC_MESSAGES is C.
absl::StatusOr<CommandResult> RunCompilerInEnglish(const std::string& compiler,
                                                   std::vector<std::string> args,
                                                   const std::string& cwd) {
  std::vector<std::string> argv;
  if (!cwd.empty() && !IsCurrentDirectory(cwd)) {
    // The subprocess helper has no working directory option; sh is on every build host.
    argv = {"/bin/sh", "-c", "cd -- \"$0\" && exec \"$@\"", cwd};
  }
  argv.push_back(compiler);
  for (std::string& arg : args) argv.push_back(std::move(arg));
  std::vector<std::string> english = {"LC_ALL=", "LC_MESSAGES=C"};
  if (const std::string all = GetEnv("LC_ALL"); !all.empty()) {
    english.push_back(absl::StrCat("LC_CTYPE=", all));
  }
  return RunCommand(argv, kScanTimeout, english);
}

}  // namespace

std::vector<std::string> ParseIncludeSearchList(const std::string& verbose_stderr) {
  std::vector<std::string> dirs;
  bool in_list = false;
  for (absl::string_view line : absl::StrSplit(verbose_stderr, '\n')) {
    if (absl::StartsWith(line, "#include ") && absl::EndsWith(line, " search starts here:")) {
      in_list = true;
    } else if (line == "End of search list.") {
      in_list = false;
    } else if (in_list && absl::StartsWith(line, " ")) {
      line.remove_prefix(1);
      // A macOS framework directory is searched by another rule: not an include directory.
      if (!absl::EndsWith(line, " (framework directory)")) dirs.emplace_back(line);
    }
  }
  return dirs;
}

std::vector<std::string> ParseNonexistentIncludeDirectories(const std::string& verbose_stderr) {
  constexpr absl::string_view kIgnoring = "ignoring nonexistent directory \"";
  std::vector<std::string> dirs;
  for (absl::string_view line : absl::StrSplit(verbose_stderr, '\n')) {
    if (absl::StartsWith(line, kIgnoring) && absl::EndsWith(line, "\"")) {
      line.remove_prefix(kIgnoring.size());
      line.remove_suffix(1);
      if (!line.empty()) dirs.emplace_back(line);
    }
  }
  return dirs;
}

absl::StatusOr<DependencyScan> ScanDependencies(const std::string& compiler,
                                                const CcCompilePlan& plan, const std::string& cwd) {
  std::string scan_output = TempDirectory() + "/farm-cc-scan-XXXXXX";
  int fd = mkstemp(scan_output.data());
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot create a temp file in ", TempDirectory(),
                                            ". Fix: set TMPDIR to a writable directory"));
  }
  close(fd);

  std::vector<std::string> args = plan.DependencyScanArgs(scan_output);
  args.push_back("-v");  // the include search list, on stderr
  absl::StatusOr<CommandResult> result = RunCompilerInEnglish(compiler, std::move(args), cwd);
  absl::StatusOr<std::string> text = result.ok() && result->exit_code == 0
                                         ? ReadFileContents(scan_output)
                                         : absl::StatusOr<std::string>(std::string());
  unlink(scan_output.c_str());
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    // -v's echo of the compiler proper's command names the temp file, which is gone.
    std::string diagnostics;
    for (absl::string_view line : absl::StrSplit(result->stderr_text, '\n')) {
      if (!absl::StrContains(line, scan_output)) absl::StrAppend(&diagnostics, line, "\n");
    }
    return absl::FailedPreconditionError(absl::StrCat("the dependency scan (", compiler,
                                                      " -M) failed with exit code ",
                                                      result->exit_code, ":\n", diagnostics));
  }
  if (!text.ok()) return text.status();

  DependencyScan scan;
  scan.files = ParseMakeDependencies(*text);
  if (std::find(scan.files.begin(), scan.files.end(), plan.source) == scan.files.end()) {
    scan.files.insert(scan.files.begin(), plan.source);
  }
  scan.search_dirs = ParseIncludeSearchList(result->stderr_text);
  return scan;
}

absl::StatusOr<std::vector<std::string>> QueryIncludeSearchList(const std::string& compiler,
                                                                const CcCompilePlan& plan,
                                                                const std::string& cwd) {
  // The call's arguments with an empty file of the source's suffix for the source: the
  // language, -I and the rest steer the list as they steer the compile.
  const std::string suffix = std::filesystem::path(plan.source).extension().string();
  std::string empty = TempDirectory() + "/farm-cc-search-XXXXXX" + suffix;
  int fd = mkstemps(empty.data(), static_cast<int>(suffix.size()));
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot create a temp file in ", TempDirectory(),
                                            ". Fix: set TMPDIR to a writable directory"));
  }
  close(fd);
  std::vector<std::string> args;
  bool replaced = false;
  for (const std::string& arg : plan.scan_base_args) {
    if (!replaced && arg == plan.source) {
      args.push_back(empty);
      replaced = true;
    } else {
      args.push_back(arg);
    }
  }
  for (const char* arg : {"-E", "-o", "/dev/null", "-v"}) args.emplace_back(arg);
  absl::StatusOr<CommandResult> result = RunCompilerInEnglish(compiler, std::move(args), cwd);
  unlink(empty.c_str());
  if (!result.ok()) return result.status();
  if (!replaced || result->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        compiler, " -E -v with the call's arguments failed with exit code ", result->exit_code));
  }
  std::vector<std::string> dirs = ParseIncludeSearchList(result->stderr_text);
  if (dirs.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(compiler, " -v printed no include search list farm-cc can read"));
  }
  // A header may appear in one later, ahead of the one found now: /usr/local/include's
  // multiarch directory, an -I of a directory the build has yet to make.
  for (std::string& dir : ParseNonexistentIncludeDirectories(result->stderr_text)) {
    dirs.push_back(std::move(dir));
  }
  return dirs;
}

}  // namespace farm::cc
