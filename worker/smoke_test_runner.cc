#include "worker/smoke_test_runner.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "libfarm/logging/logger.h"
#include "worker/build_host_environment.h"
#include "worker/echoed_command.h"
#include "worker/python_interpreters.h"

extern char** environ;

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

// The test's virtual environment, inside its working directory.
constexpr char kEnvDir[] = ".smoke-env";

void Refuse(farm::v1::Completion& completion, const std::string& message) {
  auto* result = completion.mutable_result();
  result->set_exit_code(1);
  result->set_stdout_tail(absl::StrCat("wheelfarm: ", message, "\n"));
  result->set_stderr_tail(absl::StrCat("wheelfarm: ", message, "\n"));
}

// A plain relative path of an input ("wheel/x.whl"): it is named in the script.
bool IsPlainInputPath(const std::string& path) {
  return !path.empty() && path[0] != '/' && !absl::StrContains(path, "..") &&
         !absl::StrContains(path, "\n");
}

}  // namespace

SmokeTestRunner::SmokeTestRunner(std::string scratch_root,
                                 std::map<std::string, farm::v1::PythonInterpreter> pythons,
                                 std::vector<farm::v1::GpuDevice> gpus, ActionRunner* runner)
    : scratch_root_(std::move(scratch_root)),
      pythons_(std::move(pythons)),
      gpus_(std::move(gpus)),
      runner_(runner) {}

std::string SmokeTestRunner::Script(const farm::v1::SmokeTestTask& task,
                                    const std::string& python) {
  std::string script = "set -e\nexec 2>&1\n";
  const std::string env = absl::StrCat("$PWD/", kEnvDir);
  absl::StrAppend(&script, "FARM_SMOKE_ENV=\"", env, "\"\n");
  AppendEchoedCommand(script, {python, "-m", "venv", kEnvDir});
  std::vector<std::string> pip = {absl::StrCat(kEnvDir, "/bin/python"),
                                  "-m",
                                  "pip",
                                  "install",
                                  "--no-input",
                                  "--progress-bar",
                                  "off"};
  // The wheel's run dependencies may be the farm's own builds.
  if (!task.index_url().empty()) pip.insert(pip.end(), {"--extra-index-url", task.index_url()});
  // "--" ends pip's options: a requirement is never read as one.
  pip.insert(pip.end(), {"--", absl::StrCat("./", task.wheel())});
  pip.insert(pip.end(), task.smoke().requirements().begin(), task.smoke().requirements().end());
  AppendEchoedCommand(script, pip);
  // The environment's bin first: "python" and the package's scripts are the test's own.
  absl::StrAppend(&script,
                  "export VIRTUAL_ENV=\"$FARM_SMOKE_ENV\" PATH=\"$FARM_SMOKE_ENV/bin:$PATH\"\n");
  const auto& command = task.smoke().command();
  std::vector<std::string> argv;
  if (command.argv_size() > 0) {
    for (const auto& a : command.argv())
      argv.push_back(absl::StrReplaceAll(a, {{"{sm}", task.sm()}}));
  } else {
    argv = {"/bin/sh", "-c", absl::StrReplaceAll(command.shell(), {{"{sm}", task.sm()}})};
  }
  AppendEchoedCommand(script, argv);
  return script;
}

std::vector<std::string> SmokeTestRunner::NvidiaDevices(const std::string& dev) {
  std::vector<std::string> nodes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dev, ec)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "nvidia")) nodes.push_back(entry.path().string());
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

farm::v1::Completion SmokeTestRunner::Execute(const farm::v1::Lease& lease,
                                              const std::atomic<bool>& cancel) {
  const farm::v1::SmokeTestTask& task = lease.action().smoke_test();
  farm::v1::Completion completion;
  completion.set_lease_id(lease.lease_id());
  completion.set_action_id(lease.action_id());
  auto python = pythons_.find(task.python());
  if (python == pythons_.end()) {
    Refuse(completion, absl::StrCat("this worker has no python", task.python(),
                                    " for the smoke test. Fix: install python", task.python(),
                                    " with its venv module and restart the worker"));
    return completion;
  }
  if (!IsPlainInputPath(task.wheel()) || !task.smoke().has_command()) {
    Refuse(completion, "the smoke test names no wheel input or no command");
    return completion;
  }
  ComponentLogger("worker")->info("build {}: smoke test of {} on {}", lease.action().build_id(),
                                  task.wheel(), task.sm());
  farm::v1::Action action;
  action.add_argv("/bin/sh");
  action.add_argv("-c");
  action.add_argv(Script(task, python->second.path()));
  auto& env = *action.mutable_env();
  for (auto& [name, value] : BuildHostEnvironment(environ)) env[name] = std::move(value);
  env.erase("VIRTUAL_ENV");
  env.erase("PYTHONHOME");
  env.erase("PYTHONPATH");
  env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1";
  env["PIP_CACHE_DIR"] = ".pip-cache";  // in its directory: gone with it
  env["FARM_SMOKE_SM"] = task.sm();
  env["FARM_SMOKE_ARCH"] = task.arch().empty() ? task.sm() : task.arch();
  // A test can insist on a CUDA device where the driver showed one: a GPU check that finds no
  // device on such a host is a failure, not a skip.
  const bool detected = std::any_of(gpus_.begin(), gpus_.end(), [&](const auto& g) {
    return g.sm() == task.sm() && !g.declared();
  });
  env["FARM_SMOKE_GPU"] = detected ? "detected" : "declared";
  *action.mutable_inputs() = lease.action().inputs();
  action.set_timeout_seconds(lease.action().timeout_seconds());
  action.set_build_id(lease.action().build_id());

  // What it sees in the sandbox besides its directory and the system: the network (pip), the
  // interpreter, the GPU's device nodes and a private $HOME.
  SandboxMounts mounts;
  mounts.network = true;
  mounts.read_only = InterpreterPaths(python->second);
  mounts.devices = NvidiaDevices();
  if (auto home = env.find("HOME"); home != env.end()) mounts.private_dirs.push_back(home->second);

  const fs::path base = fs::path(scratch_root_) / absl::StrCat("smoke-", lease.lease_id());
  std::error_code ec;
  fs::remove_all(base, ec);
  fs::create_directories(base, ec);
  if (ec) {
    completion.set_infra_error(absl::StrCat("cannot create ", base.string(), ": ", ec.message()));
    return completion;
  }
  completion = runner_->RunIn(lease, action, base.string(), cancel, nullptr, mounts);
  fs::remove_all(base, ec);
  return completion;
}

}  // namespace farm::worker
