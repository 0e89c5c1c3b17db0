#include "libfarm/nvcc/local_steps.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "libfarm/jobs/local_job_slot.h"
#include "libfarm/logging/logger.h"
#include "libfarm/process/path_search.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

// Host steps of a large translation unit (CUTLASS, flash-attention) take minutes.
constexpr absl::Duration kStepTimeout = absl::Hours(1);

// cudafe++ parses the whole unit as a C++ front end does, and a host compile is a compile:
// a core and much RAM each. Preprocessing and fatbinary are cheap beside them.
JobClass ClassOfStep(DryrunStepKind kind) {
  switch (kind) {
    case DryrunStepKind::kHostPreprocess:
    case DryrunStepKind::kDevicePreprocess:
    case DryrunStepKind::kFatbinary:
      return JobClass::kLight;
    default:
      return JobClass::kHeavy;
  }
}

// The host compile and fatbinary run once the unit's device code is on the farm: they close
// work under way.
bool ClosesTheUnit(DryrunStepKind kind) {
  return kind == DryrunStepKind::kHostCompile || kind == DryrunStepKind::kFatbinary;
}

}  // namespace

LocalSteps::LocalSteps(const NvccDryrun& dryrun, std::optional<LocalJobLimits> limits,
                       std::string host_compile_launcher)
    : dryrun_(dryrun),
      limits_(std::move(limits)),
      host_compile_launcher_(std::move(host_compile_launcher)) {
  for (const auto& [name, value] : dryrun.environment) {
    env_.push_back(absl::StrCat(name, "=", value));
    if (name == "PATH") path_ = value;
  }
}

std::vector<std::string> LocalSteps::Argv(size_t index) const {
  std::vector<std::string> argv = ExpandedArgv(dryrun_, dryrun_.steps[index]);
  // nvcc runs its tools through the PATH it sets; RunCommand would search ours.
  argv[0] = FindOnPath(argv[0], path_).value_or(argv[0]);
  if (OnTheFarm(index)) argv.insert(argv.begin(), host_compile_launcher_);
  return argv;
}

absl::Status LocalSteps::Run(const std::vector<size_t>& steps) {
  for (size_t index : steps) {
    if (absl::Status s = RunArgv(index, Argv(index)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status LocalSteps::RunWithOutput(size_t index, const std::string& output) {
  std::vector<std::string> argv = Argv(index);
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "-o") argv[i + 1] = output;
  }
  return RunArgv(index, std::move(argv));
}

absl::Status LocalSteps::RunWithout(size_t index, absl::string_view word) {
  std::vector<std::string> argv = Argv(index);
  argv.erase(std::remove(argv.begin() + 1, argv.end(), word), argv.end());
  return RunArgv(index, std::move(argv));
}

JobPriority LocalSteps::PriorityOf(size_t index) const {
  if (long_unit_) return JobPriority::kLongUnit;
  return ClosesTheUnit(dryrun_.steps[index].kind) ? JobPriority::kClosing : JobPriority::kOpening;
}

bool LocalSteps::OnTheFarm(size_t index) const {
  return !host_compile_launcher_.empty() &&
         dryrun_.steps[index].kind == DryrunStepKind::kHostCompile;
}

pid_t LocalSteps::Pid(size_t index) {
  absl::MutexLock lock(&mu_);
  auto it = pids_.find(index);
  return it == pids_.end() ? 0 : it->second;
}

absl::Status LocalSteps::RunArgv(size_t index, std::vector<std::string> argv) {
  // One slot per step, held only while it runs: a thread never waits holding one.
  std::optional<LocalJobSlot> slot;
  // Through farm-cc the step takes farm-cc's own slots: a light one for its scan, a heavy one
  // if it compiles here after all.
  const DryrunStep& step = dryrun_.steps[index];
  if (limits_ && !OnTheFarm(index)) {
    slot = LocalJobSlotIfUsable(*limits_, ClassOfStep(step.kind), "farm-nvcc", step.tool,
                                PriorityOf(index));
  }
  std::vector<std::string> env = env_;
  if (slot && slot->held()) env.push_back(slot->ChildEnvironmentEntry());
  if (OnTheFarm(index)) {
    env.push_back(absl::StrCat(kLocalJobPriorityVariable, "=", JobPriorityName(PriorityOf(index))));
    // Its source is a temporary of this call's private directory: a kept scan would never be
    // found again, only pile up in farm-cc's cache.
    env.push_back("FARM_CC_KEEP_SCANS=0");
  }
  auto run = RunCommand(argv, kStepTimeout, env);
  slot.reset();
  if (!run.ok()) return run.status();
  Record(index, run->stdout_text, run->stderr_text);
  {
    absl::MutexLock lock(&mu_);
    pids_[index] = run->pid;
  }
  if (run->exit_code != 0) {
    return absl::AbortedError(
        absl::StrCat(dryrun_.steps[index].tool, " exited with ", run->exit_code));
  }
  return absl::OkStatus();
}

void LocalSteps::Record(size_t index, std::string out, std::string err) {
  absl::MutexLock lock(&mu_);
  printed_[index] = {std::move(out), std::move(err)};
}

std::pair<std::string, std::string> LocalSteps::Printed() {
  absl::MutexLock lock(&mu_);
  std::pair<std::string, std::string> all;
  for (const auto& [index, texts] : printed_) {
    all.first += texts.first;
    all.second += texts.second;
  }
  return all;
}

}  // namespace farm
