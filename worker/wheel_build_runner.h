// Runs a wheel build (Action.wheel_build) on this host: renders the recipe with this host's
// facts, makes (or reuses) the recipe's Python environment (build_environment.h), runs its
// commands in a build directory whose path is the same for every build of
// that package version (so the preprocessed device code, which names source paths, and with
// it the farm's action cache, match across builds and hosts), streams the output to the
// build log, and returns the wheel once the repair step carried the libraries it needs beyond
// the manylinux policy inside it (wheel_repair.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "farm/v1/builds.grpc.pb.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/tls/client_tls.h"
#include "worker/action_executor.h"
#include "worker/action_runner.h"
#include "worker/build_environment.h"

namespace farm::worker {

struct WheelBuildOptions {
  // Parent of the build directories: <root>/<package>-<version>[-N], and of the cached
  // Python environments, <root>/.envs/<key>.
  std::string builds_root = "/var/tmp/wheelfarm-builds";
  std::string coordinator;  // given to farm-nvcc as FARM_COORDINATOR
  std::string token_file;   // given to farm-nvcc as FARM_TOKEN_FILE
  ClientTlsFiles tls;       // given to farm-nvcc as FARM_TLS_CA, FARM_TLS_CERT, FARM_TLS_KEY
  std::string farm_nvcc;    // CMAKE_CUDA_COMPILER_LAUNCHER, and PYTORCH_NVCC with the nvcc
  // CMAKE_C/CXX_COMPILER_LAUNCHER; its masquerade directory (farm-cc-masquerade beside it) goes
  // first on PATH for builds that take no launcher (setuptools, cpp_extension). Empty: none.
  std::string farm_cc;
  uint32_t cores = 1;
  uint64_t ram_bytes = 0;
  std::map<std::string, std::string> cuda_roots;  // toolkit root by version ("13.0")
  // Interpreters build environments are made from, by version ("3.11").
  std::map<std::string, farm::v1::PythonInterpreter> pythons;
};

class WheelBuildRunner final : public ActionExecutor {
 public:
  WheelBuildRunner(WheelBuildOptions options, ActionRunner* runner, CasClient* cas,
                   farm::v1::BuildService::StubInterface* builds);

  farm::v1::Completion Execute(const farm::v1::Lease& lease,
                               const std::atomic<bool>& cancel) override;

  // The /bin/sh script that runs a rendered build in the build directory's root: the source
  // cloned (git) or unpacked from its fetched input (pypi), output merged into one stream,
  // each step echoed, the first failing step ends it and says which it was.
  static std::string Script(const farm::v1::WheelBuildTask& task,
                            const std::vector<std::vector<std::string>>& steps);

  // What a build's environment gets so its nvcc calls go through farm-nvcc: CMake's launcher,
  // PYTORCH_NVCC for torch.utils.cpp_extension, the farm, the build id and, for a
  // strict_nvcc recipe, FARM_NVCC_STRICT; with farm-cc, CMake's C/C++ launchers and, for a
  // strict_cc recipe, FARM_CC_STRICT.
  static std::map<std::string, std::string> FarmNvccEnvironment(const WheelBuildOptions& options,
                                                                const std::string& cuda_root,
                                                                const std::string& build_id,
                                                                bool strict,
                                                                bool strict_cc = false);

 private:
  // The plain action that runs the build (argv, environment, inputs).
  absl::StatusOr<farm::v1::Action> PlanAction(const farm::v1::Lease& lease) const;

  const WheelBuildOptions options_;
  ActionRunner* const runner_;
  CasClient* const cas_;
  farm::v1::BuildService::StubInterface* const builds_;
  BuildEnvironments environments_;
};

// Runs wheel builds with the WheelBuildRunner, smoke tests with the SmokeTestRunner and every
// other action with the ActionRunner.
class LeaseDispatcher final : public ActionExecutor {
 public:
  LeaseDispatcher(ActionExecutor* actions, ActionExecutor* wheel_builds,
                  ActionExecutor* smoke_tests = nullptr)
      : actions_(actions), wheel_builds_(wheel_builds), smoke_tests_(smoke_tests) {}
  farm::v1::Completion Execute(const farm::v1::Lease& lease,
                               const std::atomic<bool>& cancel) override {
    if (lease.action().has_smoke_test() && smoke_tests_ != nullptr) {
      return smoke_tests_->Execute(lease, cancel);
    }
    return lease.action().has_wheel_build() ? wheel_builds_->Execute(lease, cancel)
                                            : actions_->Execute(lease, cancel);
  }

 private:
  ActionExecutor* const actions_;
  ActionExecutor* const wheel_builds_;
  ActionExecutor* const smoke_tests_;
};

}  // namespace farm::worker
