// The Python environment a recipe builds in: a virtualenv of the recipe's python{version}
// with its [python] requirements installed, so a build never depends on the worker's own
// Python packages. Environments are cached on the host under <builds-dir>/.envs by a key over
// the interpreter and the requirements, made once and reused by every later build, with pip's
// download cache shared between them (<builds-dir>/.envs/pip-cache).
//
// Making one is a build step like the others (echoed and streamed into the build log). It is
// atomic: the virtualenv is made in a fresh directory <key>.XXXXXX and published by renaming a
// symlink <key> onto it (a virtualenv cannot be moved, its scripts name their directory), under
// a lock <key>.lock so two builds needing the same environment make it once. A failed or
// cancelled step leaves nothing under <key>.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "farm/v1/types.pb.h"
#include "farm/v1/worker_service.pb.h"
#include "worker/action_runner.h"

namespace farm::worker {

struct EnvironmentRequest {
  farm::v1::PythonInterpreter python;      // the interpreter to make it from
  std::vector<std::string> requirements;   // the recipe's [python] requirements
  std::string recipe_file;                 // named when pip fails
  std::map<std::string, std::string> env;  // the host environment the step runs with
};

class BuildEnvironments {
 public:
  // `root`: the cache directory (<builds-dir>/.envs).
  BuildEnvironments(std::string root, ActionRunner* runner);

  // Makes (or finds) the environment and sets *env_dir to it. Returns the step's completion:
  // exit code 0 and no infra error when the environment is ready. A failure's stderr_tail has
  // pip's last lines and names the recipe's requirements. `follower` streams the step's
  // output; `note` gets the worker's own lines for the build log.
  farm::v1::Completion Prepare(const farm::v1::Lease& lease, const EnvironmentRequest& request,
                               const std::atomic<bool>& cancel, OutputFollower* follower,
                               const std::function<void(const std::string&)>& note,
                               std::string* env_dir);

  // The /bin/sh script of the step: `python -m venv DIR`, then (if there are requirements)
  // DIR/bin/python -m pip install -- REQUIREMENTS, each echoed, stopping at the first failure.
  static std::string StepScript(const std::string& python, const std::string& dir,
                                const std::vector<std::string>& requirements);

  // The environment variables a build in the environment at `dir` runs with, applied to
  // `env`: its bin first on PATH (and no other virtualenv on it), VIRTUAL_ENV set,
  // PYTHONHOME/PYTHONPATH dropped, PIP_CACHE_DIR shared.
  void Activate(const std::string& dir, std::map<std::string, std::string>& env) const;

  // `[python] requirements = ["a", "b"]`, as the recipe wrote them, for messages.
  static std::string RequirementsLine(const std::vector<std::string>& requirements);

 private:
  // No other virtualenv's or Python's variables; pip's cache shared by every environment.
  void ScrubPythonVariables(std::map<std::string, std::string>& env) const;
  std::string PipCacheDir() const { return root_ + "/pip-cache"; }

  const std::string root_;
  ActionRunner* const runner_;
};

}  // namespace farm::worker
