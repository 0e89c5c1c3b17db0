// One local job slot of the build host, held while a LocalJobSlot lives: at most
// LocalJobLimits::light (heavy) jobs of a class run at once across every process of this
// user that takes slots (farm-nvcc, farm-cc), whatever started them.
//
// A slot is an flock(2) on one of N files, <dir>/<class>-<i>.lock, so the kernel frees it
// when its holder ends, however it ends. A process that finds every slot taken queues on
// <dir>/<class>.queue (blocked in the kernel, not spinning); the one at the head of the
// queue polls the slot files, backing off to 100 ms, until one is free. Processes that ask
// for different limits share the files: each uses the first N of its own.
//
// Priority: with ninja as wide as the farm, thousands of units' steps queue for the build
// host's slots, and the order they get them in is the build's critical path. A unit whose
// device code took long on the farm before (kLongUnit) goes first, since the build cannot end
// before it does; then a step that closes work already under way (kClosing: a CUDA unit's
// fatbinary, the scan of its host compile once its device code is back), then the rest
// (kOpening). Within a priority, waiters queue first come, first served. A waiter above
// kOpening holds a shared lock on <dir>/<class>.<priority> while it waits and queues on
// <class>.<priority>.queue (kOpening: <class>.queue); the head of a queue takes no slot while
// anyone holds a higher priority's lock.
//
// Deadlock: a thread holds at most one slot and takes it only around one job (acquire,
// run, release). What such a job starts gets FARM_LOCAL_JOB_SLOT_HELD in its environment,
// and a process that finds it set takes no slot: its parent's covers it (nvcc -ccbin
// farm-cc), where waiting for a second slot while the parent holds one could stall the host
// once every slot is held by such a parent.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/files/file_lock.h"
#include "libfarm/jobs/local_job_limits.h"

namespace farm {

// Set to the class ("heavy") in the environment of what runs under a slot.
inline constexpr char kLocalJobSlotHeldVariable[] = "FARM_LOCAL_JOB_SLOT_HELD";

// In the order served, last first.
enum class JobPriority { kOpening, kClosing, kLongUnit };

// "opening", "closing", "long-unit": in lock file names and FARM_LOCAL_JOB_PRIORITY.
const char* JobPriorityName(JobPriority priority);

// Set in the environment of a launcher that does one step of a unit for another (farm-nvcc's
// host compile through farm-cc): its slots are then taken at that priority.
inline constexpr char kLocalJobPriorityVariable[] = "FARM_LOCAL_JOB_PRIORITY";
// The priority `name` names (JobPriorityName's words); nullopt for any other word.
std::optional<JobPriority> JobPriorityNamed(absl::string_view name);

class LocalJobSlot {
 public:
  // Takes a free slot of `job_class`, or waits for one; `waiting` (if set) runs once when
  // it has to wait. With FARM_LOCAL_JOB_SLOT_HELD set, returns at once a slot that holds
  // nothing (held() false). Creates limits.dir (0700) if needed. FAILED_PRECONDITION when the
  // directory is not this user's alone or a slot file cannot be opened; INVALID_ARGUMENT for
  // a limit below 1.
  static absl::StatusOr<LocalJobSlot> Acquire(const LocalJobLimits& limits, JobClass job_class,
                                              const std::function<void()>& waiting = nullptr,
                                              JobPriority priority = JobPriority::kOpening);

  LocalJobSlot(LocalJobSlot&& other) noexcept;
  LocalJobSlot& operator=(LocalJobSlot&& other) noexcept;
  LocalJobSlot(const LocalJobSlot&) = delete;
  LocalJobSlot& operator=(const LocalJobSlot&) = delete;
  ~LocalJobSlot() = default;

  // False when a parent's slot covers this process, or after Release.
  bool held() const { return lock_.has_value(); }
  // Which slot file (<class>-<index>.lock); -1 when none is held.
  int index() const { return held() ? index_ : -1; }
  JobClass job_class() const { return job_class_; }
  // "FARM_LOCAL_JOB_SLOT_HELD=heavy": for the environment of the child that does this job;
  // "" when no slot is held (a covered process's own environment already has it).
  std::string ChildEnvironmentEntry() const;
  // Keeps the slot held by the program this process execs next, until it ends (the caller
  // passes ChildEnvironmentEntry in its environment). Call right before exec.
  absl::Status KeepAcrossExec();
  // Frees the slot now.
  void Release() { lock_.reset(); }

 private:
  LocalJobSlot(JobClass job_class, std::optional<FileLock> lock, int index);

  JobClass job_class_;
  std::optional<FileLock> lock_;
  int index_ = -1;
};

// A slot of `job_class` for `what` ("nvcc", "cudafe++"), or none: without `limits`, or when the
// slot directory is unusable (a warning from `component`'s logger, once per process), since a
// build does not stop for that.
std::optional<LocalJobSlot> LocalJobSlotIfUsable(const std::optional<LocalJobLimits>& limits,
                                                 JobClass job_class, const std::string& component,
                                                 const std::string& what,
                                                 JobPriority priority = JobPriority::kOpening);

}  // namespace farm
