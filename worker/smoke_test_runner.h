// Runs a built wheel's smoke test (Action.smoke_test) on this host's GPU: a fresh virtual
// environment made from the recipe's Python, the wheel and the recipe's smoke requirements
// installed into it (the farm's own index beside PyPI), then the smoke command, all in one
// sandboxed step with the network (pip) and the host's NVIDIA device nodes. The environment
// is never reused: what a smoke test proves is that the wheel installs and runs from nothing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "farm/v1/actions.pb.h"
#include "farm/v1/types.pb.h"
#include "worker/action_executor.h"
#include "worker/action_runner.h"

namespace farm::worker {

class SmokeTestRunner final : public ActionExecutor {
 public:
  // `scratch_root`: where each test's directory is made (and removed). `pythons`: this
  // host's interpreters by version ("3.11").
  SmokeTestRunner(std::string scratch_root,
                  std::map<std::string, farm::v1::PythonInterpreter> pythons,
                  std::vector<farm::v1::GpuDevice> gpus, ActionRunner* runner);

  farm::v1::Completion Execute(const farm::v1::Lease& lease,
                               const std::atomic<bool>& cancel) override;

  // The /bin/sh script of the test, run in its directory: venv, pip install of the wheel and
  // requirements, then the command; each step echoed, output merged, the first failure ends
  // it.
  static std::string Script(const farm::v1::SmokeTestTask& task, const std::string& python);

  // The NVIDIA device nodes under `dev` (/dev/nvidia0, /dev/nvidiactl, /dev/nvidia-uvm ...).
  static std::vector<std::string> NvidiaDevices(const std::string& dev = "/dev");

 private:
  const std::string scratch_root_;
  const std::map<std::string, farm::v1::PythonInterpreter> pythons_;
  const std::vector<farm::v1::GpuDevice> gpus_;  // this worker's, as it advertises them
  ActionRunner* const runner_;
};

}  // namespace farm::worker
