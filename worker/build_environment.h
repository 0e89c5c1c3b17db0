// The Python environment a recipe builds in: a virtualenv of the recipe's python{version}
// with its [python] requirements installed, so a build never depends on the worker's own
// Python packages. Environments are cached on the host under <builds-dir>/.envs by a key over
// the interpreter and the requirements, made once and reused by every later build.
//
// pip's cache is never shared between different code (issue 24): pip installs a wheel it
// finds in its cache without building or checking it, so whoever can write a cache decides
// what a later install of that cache gets. Each environment step has a cache of its own,
// <builds-dir>/.envs/pip-caches/<key>, which only that key's step writes (a requirement's
// own build code runs there, and can reach only what it installs anyway); a wheel build,
// whose code is the package's, sees every environment and cache read-only and gets a private
// cache in its build directory (Activate).
//
// Making one is a build step like the others (echoed and streamed into the build log). It is
// atomic: the virtualenv is made in a fresh directory <key>.XXXXXX and published by renaming a
// symlink <key> onto it (a virtualenv cannot be moved, its scripts name their directory), under
// a lock <key>.lock so two builds needing the same environment make it once. A failed or
// cancelled step leaves nothing under <key>.
//
// The recipe's wheel prerequisites are installed with its [python] requirements (one pip
// resolve) and are part of the key; their linker names are added before the environment is
// published, and every prerequisite is checked in it each time it is used.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "farm/v1/types.pb.h"
#include "farm/v1/worker_service.pb.h"
#include "libfarm/recipes/recipe.h"
#include "worker/action_runner.h"

namespace farm::worker {

struct EnvironmentRequest {
  farm::v1::PythonInterpreter python;  // the interpreter to make it from
  // Its [python] requirements and wheel prerequisites are installed; its file is named when pip
  // fails; its prerequisites are checked (wheel_prerequisites.h).
  Recipe recipe;
  ToolkitVersion cuda;                     // the build's toolkit: {cuda_major} in wheels
  std::string cuda_home;                   // and its root: {cuda_home}
  std::map<std::string, std::string> env;  // the host environment the step runs with
  // What the step sees in the sandbox besides the system, the directory it makes the
  // environment in and pip's cache: the interpreter, the network, a private $HOME.
  SandboxMounts mounts;
  // The farm's own wheels the recipe's farm_requirements planned, installed first, each from
  // its arch set's index under `farm_index_url` ("http://127.0.0.1:7421") and nowhere else;
  // or, where the farm had none, from the package index of the recipe's fallback.
  std::vector<farm::v1::FarmWheel> farm_wheels;
  std::string farm_index_url;
  std::string farm_index_ca;  // the coordinator's CA (--tls-ca), for an https index
};

// One farm wheel install of the environment step.
struct FarmWheelInstall {
  std::string requirement;  // "torch==2.9.1+cu130.sm75"
  std::string index_url;    // "http://127.0.0.1:7421/sm75/simple/"
  std::string ca_file;      // for an https index; "" otherwise
  // The recipe's fallback (the farm has none): `requirement` ("torch==2.11.0") from the
  // package index `index_url`, or the host's own when it is "".
  bool from_package_index = false;
};

// An environment ready for a build.
struct PreparedEnvironment {
  std::string dir;            // <root>/<key>, a symlink to the virtualenv
  std::string site_packages;  // its purelib directory ({site_packages})
};

class BuildEnvironments {
 public:
  // `root`: the cache directory (<builds-dir>/.envs).
  BuildEnvironments(std::string root, ActionRunner* runner);

  // Makes (or finds) the environment, sets up the recipe's prerequisites in it and sets
  // *prepared. Returns the step's completion: exit code 0 and no infra error when the
  // environment is ready. A failure's stderr_tail has pip's last lines and names the recipe's
  // requirements or the prerequisite (with its recipe line) that failed. `follower` streams
  // the step's output; `note` gets the worker's own lines for the build log.
  farm::v1::Completion Prepare(const farm::v1::Lease& lease, const EnvironmentRequest& request,
                               const std::atomic<bool>& cancel, OutputFollower* follower,
                               const std::function<void(const std::string&)>& note,
                               PreparedEnvironment* prepared);

  // The /bin/sh script of the step: `python -m venv DIR`, then (if there are requirements)
  // DIR/bin/python -m pip install -- REQUIREMENTS, each echoed, stopping at the first failure.
  // Farm wheels go first, each alone from its farm index: pip --isolated (no PIP_INDEX_URL,
  // PIP_EXTRA_INDEX_URL or PIP_FIND_LINKS of the host), --no-deps, binary only; then they are
  // named again with the requirements, already installed, so pip adds their dependencies. A
  // fallback goes the same way from its package index (--isolated --index-url URL), or from
  // the host's own configuration when the recipe names none.
  static std::string StepScript(const std::string& python, const std::string& dir,
                                const std::vector<std::string>& requirements,
                                const std::vector<FarmWheelInstall>& farm_wheels = {});

  // The farm index's base URL as this host reaches it: a wildcard host (0.0.0.0, [::]), which
  // a coordinator listening everywhere reports, becomes the host of `coordinator` (the gRPC
  // address the worker dials).
  static std::string FarmIndexBase(const std::string& url, const std::string& coordinator);

  // The environment variables a build in the environment at `dir` runs with, applied to
  // `env`: its bin first on PATH (and no other virtualenv on it), VIRTUAL_ENV set,
  // PYTHONHOME/PYTHONPATH dropped, PIP_CACHE_DIR the build's own `pip_cache`.
  static void Activate(const std::string& dir, const std::string& pip_cache,
                       std::map<std::string, std::string>& env);

  // What a build using an environment sees in the sandbox: every environment and pip cache
  // read-only (a virtualenv's scripts name its real directory, the build its published link).
  SandboxMounts Mounts() const;

  // The local package sources pip is pointed at by `env` (paths and file: URLs in
  // PIP_FIND_LINKS, PIP_INDEX_URL and PIP_EXTRA_INDEX_URL), which a sandboxed step must see.
  static std::vector<std::string> LocalPipSources(const std::map<std::string, std::string>& env);

  // `[python] requirements = ["a", "b"]`, as the recipe wrote them, for messages.
  static std::string RequirementsLine(const std::vector<std::string>& requirements);

  // What pip could not install, from its ERROR lines: the wheel prerequisites they name (with
  // the requirement for `cuda` and the recipe line), else the [python] requirements line.
  static std::string FailedRequirementsLine(const Recipe& recipe, const ToolkitVersion& cuda,
                                            const std::string& pip_output,
                                            const std::vector<FarmWheelInstall>& farm_wheels = {});

 private:
  // No other virtualenv's or Python's variables; PIP_CACHE_DIR is `pip_cache`.
  static void ScrubPythonVariables(const std::string& pip_cache,
                                   std::map<std::string, std::string>& env);
  // The pip cache of the environment step for `key`: only it writes there.
  std::string PipCacheDir(const std::string& key) const { return root_ + "/pip-caches/" + key; }
  // Removes the cache every step and build shared before issue 24, which any build could
  // have planted wheels in.
  void RemoveSharedPipCache() const;

  const std::string root_;
  ActionRunner* const runner_;
};

}  // namespace farm::worker
