#include "libfarm/cc/dependency_scan.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "libfarm/cc/make_dependencies.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/process/subprocess.h"

namespace farm::cc {
namespace {

// A heavy C++ TU preprocesses in seconds; this only stops a hung compiler.
constexpr absl::Duration kScanTimeout = absl::Minutes(10);

std::string TempDirectory() {
  const char* tmpdir = getenv("TMPDIR");
  return tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
}

// Whether `dir` is the directory this process runs in (so no `cd` is needed).
bool IsCurrentDirectory(const std::string& dir) {
  char buffer[4096];
  return getcwd(buffer, sizeof(buffer)) != nullptr && dir == buffer;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ScanDependencies(const std::string& compiler,
                                                          const CcCompilePlan& plan,
                                                          const std::string& cwd) {
  std::string scan_output = TempDirectory() + "/farm-cc-scan-XXXXXX";
  int fd = mkstemp(scan_output.data());
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot create a temp file in ", TempDirectory(),
                                            ". Fix: set TMPDIR to a writable directory"));
  }
  close(fd);

  std::vector<std::string> argv;
  if (!cwd.empty() && !IsCurrentDirectory(cwd)) {
    // The subprocess helper has no working directory option; sh is on every build host.
    argv = {"/bin/sh", "-c", "cd -- \"$0\" && exec \"$@\"", cwd};
  }
  argv.push_back(compiler);
  for (std::string& arg : plan.DependencyScanArgs(scan_output)) argv.push_back(std::move(arg));

  absl::StatusOr<CommandResult> result = RunCommand(argv, kScanTimeout);
  absl::StatusOr<std::string> text = result.ok() && result->exit_code == 0
                                         ? ReadFileContents(scan_output)
                                         : absl::StatusOr<std::string>(std::string());
  unlink(scan_output.c_str());
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the dependency scan (", compiler, " -M) failed with exit code ",
                     result->exit_code, ":\n", result->stderr_text));
  }
  if (!text.ok()) return text.status();

  std::vector<std::string> files = ParseMakeDependencies(*text);
  if (std::find(files.begin(), files.end(), plan.source) == files.end()) {
    files.insert(files.begin(), plan.source);
  }
  return files;
}

}  // namespace farm::cc
