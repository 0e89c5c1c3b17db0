// farm-nvcc's whole-compile cache, ccache's "direct mode": a compile is found by a key over
// its command line, toolchain and source file, and its recorded result is used only while
// every file it read (the #includes, from the preprocessor's line markers) still has the
// content it had. A hit restores the object and dependency file from the CAS and replays
// the compile's output: no preprocessing, no compile.
//
// The key leaves out what provably does not reach the outputs, so that another build tree
// or another object name reuses an entry: the working directory when nothing the compile
// reads or writes into its outputs depends on it, and the names of the object and
// dependency file when the outputs do not embed them (see CompileKeyScopeOf).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "farm/v1/actions.pb.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/nvcc/line_markers.h"
#include "libfarm/nvcc/nvcc_command_line.h"

namespace farm {

// What of where a compile runs the key must hold, each with the reason when it must.
struct CompileKeyScope {
  // The working directory: host debug info records it (DW_AT_comp_dir), and a relative path
  // (-Iinclude, a relative source, -ccbin ./g++) reads other files in another directory.
  std::optional<std::string> working_directory;
  // The -o and -MF names: -g's split DWARF, profiling and dump options name files after
  // the object. Without them nvcc's object does not embed its own name (the dependency
  // file's default target, the object's name, is in the key by itself).
  std::optional<std::string> output_names;
  // With -lineinfo ptxas writes each source's mtime and size into the cubin: the entry
  // then also records them, and a touched header is a miss as in the action cache.
  bool source_stamps = false;
};

// Decides the scope of `command` run in `cwd` with this process's environment.
CompileKeyScope CompileKeyScopeOf(const NvccCommandLine& command, const std::string& cwd);

struct CompileKey {
  std::string key;  // sha256 hex
  CompileKeyScope scope;
};

// The key of one compile: nvcc and the host compiler (path, size, mtime), every argument
// (the -o and -MF values as placeholders unless the scope keeps them), the dependency
// file's targets, the environment nvcc reads, the source file's content and real path (nvcc's
// module id hashes it into symbol names), and the working directory when the scope keeps it.
absl::StatusOr<CompileKey> CompileCacheKey(const std::string& nvcc, const NvccCommandLine& command);

// The files a preprocess read (LineMarkerFiles) as sorted absolute paths, less anything
// under `skip_dir` (the compile's temporaries). A relative one is resolved in this working
// directory; the key then holds the directory, as the command line has a relative path.
std::vector<std::string> IncludedFiles(const std::vector<LineMarkerFile>& marked,
                                       const std::string& skip_dir);

// A file a compile writes and the cache records and restores. The entry names it by its
// role only, so one recorded under another -o name restores to this call's path.
struct CompileCacheOutput {
  std::string role;  // kObjectRole or kDependencyFileRole
  std::string path;  // as this call names it
};
inline constexpr char kObjectRole[] = "object";
inline constexpr char kDependencyFileRole[] = "dependency file";

// The object (-o) and the dependency file (-MF, when written beside the compile).
std::vector<CompileCacheOutput> CompileCacheOutputs(const NvccCommandLine& command);

// OK when `entry` lists exactly the roles `expected` (each once, spelled alike): an entry is
// data from the farm, and a restore must never write a path this nvcc call did not name (a
// ~/.bashrc, a "../x", a second copy of the object). PERMISSION_DENIED naming the entry's
// word otherwise.
absl::Status CheckRestorableOutputs(const farm::v1::CompileResult& entry,
                                    const std::vector<std::string>& expected_roles);

class CompileCache {
 public:
  CompileCache(ActionClient* actions, CasClient* cas) : actions_(actions), cas_(cas) {}

  // The recorded result when every dependency still matches, after writing its outputs to
  // this call's paths for their roles; nullopt on a miss. `outputs` (CompileCacheOutputs of
  // the call) are the only paths it may write: an entry naming anything else is
  // PERMISSION_DENIED before anything is written. Errors are for the log only: the caller
  // compiles.
  absl::StatusOr<std::optional<farm::v1::CompileResult>> Restore(
      const CompileKey& key, const std::vector<CompileCacheOutput>& outputs);

  // Records a finished compile: fingerprints `dependencies`, uploads `outputs` and stores
  // the entry.
  absl::Status Record(const CompileKey& key, const std::vector<std::string>& dependencies,
                      const std::vector<CompileCacheOutput>& outputs,
                      const std::string& stdout_text, const std::string& stderr_text);

 private:
  ActionClient* const actions_;
  CasClient* const cas_;
};

}  // namespace farm
