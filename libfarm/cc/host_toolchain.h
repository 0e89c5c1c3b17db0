// The toolchain closure of a host compiler: every file a `-c` compile executes or loads, to
// ship as a FileTree (HostToolchain.tree) so a sandboxed worker runs the build host's own
// compiler, at the build host's paths.
//
// Not in it: locale files. Diagnostics' quotes and messages follow LC_ALL/LC_MESSAGES/LANG,
// which farm-cc passes in the action's environment; a sandbox without the locale's files falls
// back to the C locale's ASCII quotes, so callers send such compiles with a C/POSIX locale
// environment or keep them local.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "farm/v1/actions.pb.h"
#include "farm/v1/cas.pb.h"
#include "libfarm/cc/cc_command_line.h"

namespace farm::cc {

struct HostToolchainFiles {
  std::string compiler;  // absolute path of the driver as it is called (symlinks kept)
  std::string cpu_arch;  // ElfMachineName of the driver's real file ("x86_64", "aarch64")
  CompilerFamily family = CompilerFamily::kGcc;  // as the driver's --version says
  // Every absolute path put in the tree, as found (driver, programs, loader, libraries...).
  std::vector<std::string> paths;
  // The tree of `paths` (links kept) and its digest: HostToolchain.tree.
  farm::v1::FileTree tree;
  farm::v1::Digest tree_digest;
  // Directories whose listing discovery depends on (where clang looks for GCC installations):
  // the cache is stale when one changes.
  std::vector<std::string> watched_directories;
};

// Runs the driver to find what a -c compile executes and loads:
//  gcc: -print-prog-name= cc1, cc1plus and as (a bare name like "as" is what the driver then
//    finds on PATH, so it is looked up there), -print-file-name=specs when it exists;
//    liblto_plugin is left out: only collect2/ld load it, for links, and -flto stays local;
//  clang: the driver (cc1 runs in process, with the integrated assembler) and the GCC
//    installation it selects ("Selected GCC installation: DIR" of -v): DIR/crtbegin.o, by
//    which clang picks it (without it no libstdc++ headers are found), and the distribution's
//    release files clang reads to tell the distribution;
//  both: each ELF's PT_INTERP loader and its DT_NEEDED closure (`<loader> --list`), and
//    /etc/ld.so.cache, so the sandbox's loader finds the same libraries the host's does.
// `compiler_path` without a '/' is looked up on PATH.
absl::StatusOr<HostToolchainFiles> DiscoverHostToolchain(const std::string& compiler_path);

// The same, cached in `cache_dir` (one JSON file per driver path and environment that steers
// discovery: PATH, LD_LIBRARY_PATH, COMPILER_PATH, GCC_EXEC_PREFIX), valid while the size and
// mtime of every tree entry and of the directories discovery searched stay the same: the
// per-call cost is a few dozen lstat calls. Concurrent callers may race: each writes a temp
// file and renames it.
absl::StatusOr<HostToolchainFiles> CachedHostToolchain(const std::string& compiler_path,
                                                       const std::string& cache_dir);

}  // namespace farm::cc
