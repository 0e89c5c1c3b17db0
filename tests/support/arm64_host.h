// An emulated ARM64 host for integration tests: commands run inside the cached arm64 Debian
// root under qemu-user (scripts/arm64-host.sh), with the aarch64 binaries of
// scripts/cross-build-aarch64.sh and an aarch64 CUDA toolkit from PyPI. Each host has its
// own directory, seen inside as /host. When something it needs is missing (binfmt, the
// root, the cross build, the toolkit) Create fails naming the fix: tests never skip.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/support/farm_processes.h"

namespace farm::testing {

// The CUDA toolkit release the emulated hosts offer (PyPI's aarch64 wheels): the same
// release as the x86_64 machine's /usr/local/cuda, so device actions can go either way.
inline constexpr char kArm64ToolkitRelease[] = "13.0.88";

class Arm64Host {
 public:
  // `dir` is this host's directory (made if missing); the toolkit, with cuBLAS, is installed
  // (or found) under ~/.cache/wheelfarm/toolkits.
  static absl::StatusOr<Arm64Host> Create(const std::string& dir);

  // argv wrapped to run inside the host, the toolkit mounted at /opt/cuda. With
  // `nested_sandbox`, a farm-worker inside can sandbox its actions (arm64-host.sh's
  // --nested-sandbox: this machine's bwrap, a /proc of its own).
  std::vector<std::string> Command(const std::vector<std::string>& argv,
                                   bool nested_sandbox = false) const;
  // Runs a command inside the host to completion.
  absl::StatusOr<CommandResult> Run(const std::vector<std::string>& argv,
                                    absl::Duration timeout) const;
  // The machine's path of `inside`, a path under /host.
  std::string Outside(const std::string& inside) const;
  // Copies a file of this machine into the host; returns its path inside (/host/NAME).
  absl::StatusOr<std::string> CopyIn(const std::string& outside, const std::string& name) const;

  // An aarch64 farm-worker on this host, joining `coordinator` (on loopback) with the
  // coordinator's token, offering the toolkit at /opt/cuda; with --no-sandbox unless
  // `sandboxed` (then it takes filesystem image actions: farm-cc's compiles).
  absl::StatusOr<WorkerProcess> StartWorker(const std::string& coordinator,
                                            const std::string& token_file, const std::string& name,
                                            const std::vector<std::string>& extra_args = {},
                                            bool sandboxed = false) const;

  const std::string& dir() const { return dir_; }
  const std::string& toolkit() const { return toolkit_; }

 private:
  std::string dir_, toolkit_;
};

}  // namespace farm::testing
