#include "libfarm/jobs/local_job_slot.h"

#include <mutex>

#include "libfarm/logging/logger.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "libfarm/process/environment.h"

namespace farm {
namespace {

constexpr absl::Duration kFirstPoll = absl::Milliseconds(5);
constexpr absl::Duration kLongestPoll = absl::Milliseconds(100);

// Creates `dir` (0700) if needed and checks that no other user can create, replace or hold
// its lock files: another user's directory could otherwise keep every slot taken.
absl::Status PrepareSlotDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create the local job slot directory ", dir, ": ", std::strerror(errno),
                     ". Fix: set ", kLocalJobsDirVariable, " to a directory you can write"));
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("the local job slot directory ", dir,
                                                      " is not a directory. Fix: remove it "
                                                      "or set ",
                                                      kLocalJobsDirVariable,
                                                      " to a directory of yours"));
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the local job slot directory ", dir,
                     " is not this user's alone (another user could hold its slots). Fix: "
                     "remove it, or set ",
                     kLocalJobsDirVariable, " to a directory only you can write"));
  }
  return absl::OkStatus();
}

std::string LockPath(const LocalJobLimits& limits, JobClass job_class, absl::string_view suffix) {
  return absl::StrCat(limits.dir, "/", JobClassName(job_class), suffix);
}

constexpr JobPriority kPriorities[] = {JobPriority::kOpening, JobPriority::kClosing,
                                       JobPriority::kLongUnit};

// Where waiters of `priority` say they wait (held shared while they do).
std::string AnnouncementPath(const LocalJobLimits& limits, JobClass job_class,
                             JobPriority priority) {
  return LockPath(limits, job_class, absl::StrCat(".", JobPriorityName(priority)));
}

// Whether anyone waits for a slot of this class at a priority above `priority`.
absl::StatusOr<bool> HigherWaiterPresent(const LocalJobLimits& limits, JobClass job_class,
                                         JobPriority priority) {
  for (JobPriority higher : kPriorities) {
    if (higher <= priority) continue;
    const std::string announcement = AnnouncementPath(limits, job_class, higher);
    std::error_code ec;
    // No file: no one ever waited at that priority (probing would create it).
    if (!std::filesystem::exists(announcement, ec)) continue;
    auto probe = FileLock::TryAcquire(announcement);
    if (probe.ok()) continue;
    if (absl::IsUnavailable(probe.status())) return true;
    return probe.status();
  }
  return false;
}

}  // namespace

const char* JobPriorityName(JobPriority priority) {
  switch (priority) {
    case JobPriority::kClosing:
      return "closing";
    case JobPriority::kLongUnit:
      return "long-unit";
    default:
      return "opening";
  }
}

std::optional<JobPriority> JobPriorityNamed(absl::string_view name) {
  for (JobPriority priority : kPriorities) {
    if (name == JobPriorityName(priority)) return priority;
  }
  return std::nullopt;
}

LocalJobSlot::LocalJobSlot(JobClass job_class, std::optional<FileLock> lock, int index)
    : job_class_(job_class), lock_(std::move(lock)), index_(index) {}

LocalJobSlot::LocalJobSlot(LocalJobSlot&& other) noexcept
    : job_class_(other.job_class_), lock_(std::move(other.lock_)), index_(other.index_) {
  other.lock_.reset();
}

LocalJobSlot& LocalJobSlot::operator=(LocalJobSlot&& other) noexcept {
  if (this != &other) {
    lock_.reset();
    job_class_ = other.job_class_;
    index_ = other.index_;
    if (other.lock_) lock_.emplace(std::move(*other.lock_));
    other.lock_.reset();
  }
  return *this;
}

absl::StatusOr<LocalJobSlot> LocalJobSlot::Acquire(const LocalJobLimits& limits, JobClass job_class,
                                                   const std::function<void()>& waiting,
                                                   JobPriority priority) {
  if (!GetEnv(kLocalJobSlotHeldVariable).empty()) {
    return LocalJobSlot(job_class, std::nullopt, -1);
  }
  const int count = job_class == JobClass::kHeavy ? limits.heavy : limits.light;
  if (count < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a limit of ", count, " ", JobClassName(job_class), " local jobs admits none. Fix: set ",
        job_class == JobClass::kHeavy ? kLocalJobsHeavyVariable : kLocalJobsLightVariable,
        " to 1 or more"));
  }
  if (absl::Status s = PrepareSlotDirectory(limits.dir); !s.ok()) return s;

  bool waited = false;
  auto wait_noted = [&] {
    if (!waited && waiting) waiting();
    waited = true;
  };
  std::optional<FileLock> announced;  // held while this waits above kOpening
  if (priority != JobPriority::kOpening) {
    auto shared = FileLock::AcquireShared(AnnouncementPath(limits, job_class, priority));
    if (!shared.ok()) return shared.status();
    announced.emplace(*std::move(shared));
  }
  // Waiters queue here, so that one at a time polls the slots and none overtakes another of
  // its priority.
  auto queue =
      FileLock::Acquire(priority == JobPriority::kOpening
                            ? LockPath(limits, job_class, ".queue")
                            : absl::StrCat(AnnouncementPath(limits, job_class, priority), ".queue"),
                        wait_noted);
  if (!queue.ok()) return queue.status();
  absl::Duration poll = kFirstPoll;
  while (true) {
    auto yield = HigherWaiterPresent(limits, job_class, priority);
    if (!yield.ok()) return yield.status();
    for (int i = 0; i < count && !*yield; ++i) {
      auto slot = FileLock::TryAcquire(LockPath(limits, job_class, absl::StrCat("-", i, ".lock")));
      if (slot.ok()) return LocalJobSlot(job_class, *std::move(slot), i);
      if (!absl::IsUnavailable(slot.status())) return slot.status();
    }
    wait_noted();
    absl::SleepFor(poll);
    poll = std::min(poll * 2, kLongestPoll);
  }
}

std::string LocalJobSlot::ChildEnvironmentEntry() const {
  if (!held()) return "";
  return absl::StrCat(kLocalJobSlotHeldVariable, "=", JobClassName(job_class_));
}

absl::Status LocalJobSlot::KeepAcrossExec() {
  if (!held()) return absl::OkStatus();
  return lock_->KeepAcrossExec();
}

std::optional<LocalJobSlot> LocalJobSlotIfUsable(const std::optional<LocalJobLimits>& limits,
                                                 JobClass job_class, const std::string& component,
                                                 const std::string& what, JobPriority priority) {
  if (!limits) return std::nullopt;
  auto slot = LocalJobSlot::Acquire(
      *limits, job_class,
      [&] {
        ComponentLogger(component)->debug("{} waits for a {} local job slot", what,
                                          JobClassName(job_class));
      },
      priority);
  if (slot.ok()) return *std::move(slot);
  static std::once_flag warned;
  std::call_once(warned, [&] {
    ComponentLogger(component)->warn("running local work without a job slot: {}",
                                     slot.status().message());
  });
  return std::nullopt;
}

}  // namespace farm
