// Running nvcc's own sub-commands on this host, as nvcc would: with the environment its
// dryrun sets and its tools found through the PATH it gives them. What each step prints is
// kept and handed back in plan order, so the user sees nvcc's output in nvcc's order.
// With local job limits, each step runs under a slot of the build host (LocalJobSlot):
// light for preprocessing and fatbinary, heavy for cudafe++ and the host compile; a long unit's
// steps first, then steps that close a unit's work (the host compile, fatbinary).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "libfarm/jobs/local_job_limits.h"
#include "libfarm/jobs/local_job_slot.h"
#include "libfarm/nvcc/nvcc_dryrun.h"

namespace farm {

class LocalSteps {
 public:
  // Without `limits` the steps take no local job slots. With `host_compile_launcher` (farm-cc)
  // the host compile runs through it, on the farm, and takes farm-cc's slots, not one here.
  explicit LocalSteps(const NvccDryrun& dryrun, std::optional<LocalJobLimits> limits = std::nullopt,
                      std::string host_compile_launcher = "");

  // A unit whose device code took long on the farm before: its steps take their slots ahead
  // of other units' (JobPriority::kLongUnit).
  void set_long_unit(bool long_unit) { long_unit_ = long_unit; }

  // Runs steps in order and records what they print; stops at the first failure
  // (kAborted "<tool> exited with N" for a non-zero exit).
  absl::Status Run(const std::vector<size_t>& steps);
  // Runs one step with its -o replaced by `output`; records and fails as Run does.
  absl::Status RunWithOutput(size_t index, const std::string& output);
  // Runs one step without the word `word` (each occurrence); records and fails as Run does.
  absl::Status RunWithout(size_t index, absl::string_view word);
  // The process id step `index` last ran as here (0 if it has not run here).
  pid_t Pid(size_t index);
  // Records what a step that ran elsewhere printed, in its place in the plan.
  void Record(size_t index, std::string out, std::string err);
  // Everything printed, in plan order.
  std::pair<std::string, std::string> Printed();

 private:
  // The host compile step, with a launcher: it runs on the farm.
  bool OnTheFarm(size_t index) const;
  JobPriority PriorityOf(size_t index) const;

  // Step `index`'s words with $VARS expanded and the tool resolved.
  std::vector<std::string> Argv(size_t index) const;
  absl::Status RunArgv(size_t index, std::vector<std::string> argv);

  const NvccDryrun& dryrun_;
  const std::optional<LocalJobLimits> limits_;
  const std::string host_compile_launcher_;
  bool long_unit_ = false;
  std::vector<std::string> env_;
  std::string path_;
  absl::Mutex mu_;
  std::map<size_t, std::pair<std::string, std::string>> printed_ ABSL_GUARDED_BY(mu_);
  std::map<size_t, pid_t> pids_ ABSL_GUARDED_BY(mu_);
};

}  // namespace farm
