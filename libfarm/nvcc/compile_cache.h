// farm-nvcc's whole-compile cache, ccache's "direct mode": a compile is found by a key over
// its command line, working directory, toolchain and source file, and its recorded result
// is used only while every file it read (the #includes, from the preprocessor's line
// markers) still has the content it had. A hit restores the object and dependency file
// from the CAS and replays the compile's output: no preprocessing, no compile.
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

// The key of one compile: nvcc and the host compiler (path, size, mtime), the working
// directory, every argument, the environment nvcc reads, and the source file's content.
absl::StatusOr<std::string> CompileCacheKey(const std::string& nvcc,
                                            const NvccCommandLine& command);

// The files a preprocess read (LineMarkerFiles) as sorted absolute paths, less anything
// under `skip_dir` (the compile's temporaries).
std::vector<std::string> IncludedFiles(const std::vector<LineMarkerFile>& marked,
                                       const std::string& skip_dir);

// The files a compile writes and the cache records and restores: the object (-o) and the
// dependency file (-MF, when written beside the compile), spelled as the command names them.
std::vector<std::string> CompileCacheOutputs(const NvccCommandLine& command);

// OK when `entry` lists exactly `expected` (each once, spelled alike): an entry is data from
// the farm, and a restore must never write a path this nvcc call did not name (a
// ~/.bashrc, a "../x", a second copy of the object). PERMISSION_DENIED naming the path
// otherwise.
absl::Status CheckRestorableOutputs(const farm::v1::CompileResult& entry,
                                    const std::vector<std::string>& expected);

class CompileCache {
 public:
  CompileCache(ActionClient* actions, CasClient* cas) : actions_(actions), cas_(cas) {}

  // The recorded result when every dependency still matches, after writing its outputs to
  // their paths; nullopt on a miss. `expected_outputs` (CompileCacheOutputs of the call) are
  // the only paths it may write: an entry naming anything else is PERMISSION_DENIED before
  // anything is written. Errors are for the log only: the caller compiles.
  absl::StatusOr<std::optional<farm::v1::CompileResult>> Restore(
      const std::string& key, const std::vector<std::string>& expected_outputs);

  // Records a finished compile: hashes `dependencies`, uploads `outputs` (paths as the
  // command named them) and stores the entry.
  absl::Status Record(const std::string& key, const std::vector<std::string>& dependencies,
                      const std::vector<std::string>& outputs, const std::string& stdout_text,
                      const std::string& stderr_text);

 private:
  ActionClient* const actions_;
  CasClient* const cas_;
};

}  // namespace farm
