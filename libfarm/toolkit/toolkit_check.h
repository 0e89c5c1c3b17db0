// Whether a directory is a complete CUDA toolkit, and whether this host can run its tools:
// `farmctl toolkit check`, the end of `farmctl toolkit install`, and a worker's start.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/toolkit/toolkit_probe.h"

namespace farm {

// The files every use of a toolkit needs, relative to its root, and whether each must be
// executable: nvcc and the tools its device and host steps run, the profile nvcc reads its
// paths from, libdevice (cicc links it), the crt headers and cuda_runtime.h (nvcc's
// preprocessors include them).
struct ToolkitFile {
  const char* path;
  bool executable;
};
const std::vector<ToolkitFile>& RequiredToolkitFiles();

// NOT_FOUND naming each missing (or non-executable) file by its full path, with a Fix.
absl::Status CheckToolkitFiles(const std::string& root);

// The CPU an ELF executable is for: "x86_64", "aarch64", or "ELF machine N"; "script" for a
// #! script (a wrapper nvcc runs with this host's interpreter).
absl::StatusOr<std::string> ExecutableCpuArch(const std::string& path);

// A binfmt_misc entry the kernel would hand `path` to (qemu-user for a foreign CPU).
struct BinfmtHandler {
  std::string name;         // "qemu-aarch64"
  std::string interpreter;  // "/usr/libexec/qemu-binfmt/aarch64-binfmt-P"
};
// The enabled magic entry of `binfmt_dir` that matches the first bytes of `path`, if any.
std::optional<BinfmtHandler> FindBinfmtHandler(
    const std::string& path, const std::string& binfmt_dir = "/proc/sys/fs/binfmt_misc");

// OK when this host can start `path`: a #! script, or an ELF executable for this host's CPU, or a
// binfmt_misc handler takes it and its loader (PT_INTERP) is found where qemu-user looks
// ($QEMU_LD_PREFIX, /etc/qemu-binfmt/<arch>, then /). Otherwise FAILED_PRECONDITION saying
// why, with a Fix.
absl::Status CheckHostCanRun(const std::string& path);

struct ToolkitCheck {
  std::string root;
  std::string cpu_arch;  // of its bin/nvcc
  bool ran_nvcc = false;
  std::string version;  // "13.2", from `nvcc --version` when it ran
  std::string release;  // "V13.2.86"
  std::string not_run;  // why nvcc was not run (a CPU this host cannot run): files only
};

struct ToolkitCheckOptions {
  std::string expect_release;  // "13.2.86": `nvcc --version` must say V13.2.86
  // A toolkit this host cannot run is an error (a worker's), not a files-only check.
  bool must_run = false;
};

// Files first (CheckToolkitFiles), then `nvcc --version` when this host can run it.
absl::StatusOr<ToolkitCheck> CheckToolkit(const std::string& root,
                                          const ToolkitCheckOptions& options = {});

// A worker's toolkit: complete, runnable here (else refused with the reason and a fix),
// then probed for its version and SMs.
absl::StatusOr<ToolkitInfo> ProbeUsableToolkit(const std::string& root);

}  // namespace farm
