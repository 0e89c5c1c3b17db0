// The local dependency scan: which files a compile reads, from the compiler's own `-M`.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/cc/cc_command_line.h"

namespace farm::cc {

struct DependencyScan {
  // Every file the depfile lists (as written, may be relative to cwd), the source included
  // (first when -M leaves it out, as it does for .i/.ii).
  std::vector<std::string> files;
  // The compiler's include search list for this call as its -v prints it: the quoted-include
  // directories, then the <...> ones, command-line and built-in alike. Empty when it printed
  // none farm-cc can read (a translated message): nothing may then rest on it.
  std::vector<std::string> search_dirs;
};

// Runs `compiler plan.DependencyScanArgs(tmp) -v` in `cwd` with the current environment. On a
// failing scan: FAILED_PRECONDITION with the compiler's stderr (the caller then compiles
// locally, so the user sees the real diagnostics).
absl::StatusOr<DependencyScan> ScanDependencies(const std::string& compiler,
                                                const CcCompilePlan& plan, const std::string& cwd);

// The compiler's include search list for the call's arguments, without a scan: `compiler
// -E -v` on an empty source of the same suffix in `cwd`, followed by the directories it
// ignored as nonexistent (a header may appear there later). FAILED_PRECONDITION when it
// fails or prints no list farm-cc can read.
absl::StatusOr<std::vector<std::string>> QueryIncludeSearchList(const std::string& compiler,
                                                                const CcCompilePlan& plan,
                                                                const std::string& cwd);

// The directories of the include search list in a GCC or clang `-v` stderr, in order.
std::vector<std::string> ParseIncludeSearchList(const std::string& verbose_stderr);

// The directories a GCC or clang `-v` stderr says it ignored as nonexistent, in order.
std::vector<std::string> ParseNonexistentIncludeDirectories(const std::string& verbose_stderr);

}  // namespace farm::cc
