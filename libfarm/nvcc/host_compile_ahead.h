// The host compile of a split nvcc call, run while the last device jobs still compile.
//
// The host compile needs two things from the device side: the stub cicc writes (the host
// code that registers the kernels) and the fat binary, #included last as the .fatbin.c.
// The job that writes the stub is sent first (DeviceCompileContext::early_job); once it is
// back, the host compile starts with a placeholder .fatbin.c and writes an object of its
// own. When every cubin is back, fatbinary writes the real .fatbin.c; if its frame is the
// placeholder's, its bytes replace the placeholder's in the object's .nv_fatbin section
// (ReplaceSectionContents), which gives the very object the host compile writes under nvcc.
// Anything else, and the caller runs the host compile in nvcc's order.
//
// On 2 cores this is the difference between the host compile running after the device
// compiles and beside them: with 3 archs on 2 workers, one core is otherwise idle.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "libfarm/nvcc/device_job.h"
#include "libfarm/nvcc/local_steps.h"
#include "libfarm/nvcc/nvcc_dryrun.h"

namespace farm {

class HostCompileAhead {
 public:
  // nullptr when the plan is not one this handles: the steps after the device jobs must be
  // exactly fatbinary then the host compile, whole-program (-c, not -rdc), without -g (the
  // array bound of the fat binary is in debug info), with the stub and the .fatbin.c among
  // `temp_dir`'s files.
  static std::unique_ptr<HostCompileAhead> Plan(const NvccDryrun& dryrun,
                                                const std::vector<DeviceJob>& jobs,
                                                const std::string& temp_dir);
  ~HostCompileAhead();

  // The job that writes the stub the host compile includes.
  size_t stub_job() const { return stub_job_; }
  size_t host_compile_step() const { return host_compile_; }
  // Starts the host compile on a thread. Call once the stub job's outputs are written.
  void Start(LocalSteps& local);
  // Runs fatbinary and, if the compile started ahead can be used, writes the object where
  // nvcc would. False when it cannot: the caller runs the host compile itself. Errors are
  // fatbinary's, as LocalSteps::Run gives them.
  absl::StatusOr<bool> Finish(LocalSteps& local);

 private:
  HostCompileAhead(size_t stub_job, size_t fatbinary, size_t host_compile, std::string fatbin_c,
                   std::string object, std::string ahead_object)
      : stub_job_(stub_job),
        fatbinary_(fatbinary),
        host_compile_(host_compile),
        fatbin_c_(std::move(fatbin_c)),
        object_(std::move(object)),
        ahead_object_(std::move(ahead_object)) {}
  // Whether the object compiled ahead, given the real .fatbin.c, can become the output.
  absl::Status UseObjectCompiledAhead();

  const size_t stub_job_;
  const size_t fatbinary_;
  const size_t host_compile_;
  const std::string fatbin_c_;      // where fatbinary writes the .fatbin.c
  const std::string object_;        // the host compile's -o: the user's object
  const std::string ahead_object_;  // where the compile ahead writes instead
  std::thread compile_;
  absl::Status compiled_;  // written by compile_ before it ends
};

}  // namespace farm
