#include "libfarm/jobs/local_job_slot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

using ::testing::HasSubstr;

// Generous: a loaded CI machine may take long to schedule a process; a correct slot never
// needs this long.
constexpr int kEventuallyMs = 60'000;
// How long a waiter is watched not getting a slot: never long enough to pass by luck the
// other way, since a correct slot is not given at all while every slot is held.
constexpr int kStillWaitingMs = 300;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "farm-jobs-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A separate process that takes a slot, says which over a pipe, and holds it until told to
// let go (or killed).
class Holder {
 public:
  Holder(const LocalJobLimits& limits, JobClass job_class,
         JobPriority priority = JobPriority::kOpening)
      : Holder([&] {
          auto slot = LocalJobSlot::Acquire(limits, job_class, nullptr, priority);
          if (!slot.ok() || !slot->held()) return '!';
          static std::optional<LocalJobSlot> held;  // until the child exits
          held.emplace(*std::move(slot));
          return static_cast<char>('0' + held->index());
        }) {}
  // Runs `take` in the child (what it takes is held until the child exits); Slot() returns
  // the digit it gives.
  explicit Holder(const std::function<char()>& take) {
    int ready[2];
    int release[2];
    if (pipe(ready) != 0 || pipe(release) != 0) std::abort();
    pid_ = fork();
    if (pid_ == 0) {
      close(ready[0]);
      close(release[1]);
      const char index = take();
      if (write(ready[1], &index, 1) != 1) _exit(3);
      char c;
      while (read(release[0], &c, 1) < 0 && errno == EINTR) {
      }
      _exit(0);
    }
    close(ready[1]);
    close(release[0]);
    ready_ = ready[0];
    release_ = release[1];
  }
  ~Holder() {
    if (release_ >= 0) close(release_);
    close(ready_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // The slot index it got within `ms`; nullopt while it is still waiting.
  std::optional<int> Slot(int ms) {
    if (index_) return index_;
    pollfd p{ready_, POLLIN, 0};
    if (poll(&p, 1, ms) != 1) return std::nullopt;
    char c = 0;
    if (read(ready_, &c, 1) != 1) return std::nullopt;
    index_ = c == '!' ? -1 : c - '0';
    return index_;
  }
  // Lets go: the process exits, closing its slot.
  void Release() {
    // A byte, not EOF: holders forked later share this pipe's write end.
    if (write(release_, "x", 1) != 1) ADD_FAILURE() << "cannot tell the holder to let go";
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  void Kill() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int ready_ = -1;
  int release_ = -1;
  std::optional<int> index_;
};

// For a Holder: a waiter at a priority, between saying so (a shared lock on the priority's
// file) and its first poll; gives '0'.
std::function<char()> WaitsAt(const std::string& announcement) {
  return [announcement] {
    auto announced = FileLock::AcquireShared(announcement);
    if (!announced.ok()) return '!';
    static std::optional<FileLock> held;  // until the child exits
    held.emplace(*std::move(announced));
    return '0';
  };
}

// Whether an unrelated program (util-linux flock) finds the slot file locked.
bool LockedForOthers(const std::string& file) {
  auto r = RunCommand({"flock", "--nonblock", file, "true"}, absl::Seconds(30));
  EXPECT_TRUE(r.ok()) << r.status() << " (the test needs util-linux's flock)";
  return r.ok() && r->exit_code != 0;
}

LocalJobLimits Limits(const TempDir& dir, int light, int heavy) {
  return LocalJobLimits{light, heavy, dir.path() + "/slots"};
}

TEST(LocalJobSlotTest, NSlotsAdmitExactlyNHoldersAcrossProcesses) {
  TempDir dir;
  const LocalJobLimits limits = Limits(dir, 1, 3);
  Holder a(limits, JobClass::kHeavy), b(limits, JobClass::kHeavy), c(limits, JobClass::kHeavy);
  std::set<int> taken;
  for (Holder* h : {&a, &b, &c}) {
    auto slot = h->Slot(kEventuallyMs);
    ASSERT_TRUE(slot.has_value());
    taken.insert(*slot);
  }
  EXPECT_EQ(taken, (std::set<int>{0, 1, 2}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(LockedForOthers(absl::StrCat(limits.dir, "/heavy-", i, ".lock")));
  }
  // The classes are apart: the light slot is still free.
  Holder light(limits, JobClass::kLight);
  EXPECT_EQ(light.Slot(kEventuallyMs), 0);

  Holder fourth(limits, JobClass::kHeavy);
  EXPECT_FALSE(fourth.Slot(kStillWaitingMs).has_value()) << "a 4th heavy job ran beside 3";
  const int freed = *b.Slot(0);
  b.Release();
  EXPECT_EQ(fourth.Slot(kEventuallyMs), freed);
}

TEST(LocalJobSlotTest, AKilledHolderFreesItsSlot) {
  TempDir dir;
  const LocalJobLimits limits = Limits(dir, 2, 1);
  Holder first(limits, JobClass::kLight), second(limits, JobClass::kLight);
  ASSERT_TRUE(first.Slot(kEventuallyMs).has_value());
  ASSERT_TRUE(second.Slot(kEventuallyMs).has_value());
  Holder waiter(limits, JobClass::kLight);
  EXPECT_FALSE(waiter.Slot(kStillWaitingMs).has_value());
  const int freed = *first.Slot(0);
  first.Kill();
  EXPECT_EQ(waiter.Slot(kEventuallyMs), freed);
}

TEST(LocalJobSlotTest, WaitsForAnUnrelatedProcessHoldingTheSlotFile) {
  TempDir dir;
  const LocalJobLimits limits = Limits(dir, 1, 1);
  auto first = LocalJobSlot::Acquire(limits, JobClass::kHeavy);  // creates the directory
  ASSERT_TRUE(first.ok()) << first.status();
  first->Release();
  const std::string file = limits.dir + "/heavy-0.lock";
  // flock(1)'s idiom: the lock is on the shell's descriptor 9, which sleep then holds.
  auto flock = Subprocess::Spawn(
      {"sh", "-c", absl::StrCat("exec 9>'", file, "' && flock 9 && exec sleep 600")});
  ASSERT_TRUE(flock.ok()) << flock.status();
  for (int i = 0; i < 600 && !LockedForOthers(file); ++i) usleep(100'000);
  ASSERT_TRUE(LockedForOthers(file));
  Holder waiter(limits, JobClass::kHeavy);
  EXPECT_FALSE(waiter.Slot(kStillWaitingMs).has_value());
  flock->Signal(SIGKILL);
  flock->Wait(absl::Seconds(60));
  EXPECT_EQ(waiter.Slot(kEventuallyMs), 0);
}

TEST(LocalJobSlotTest, ThreadsOfOneProcessWaitTooAndWaitingIsSaidOnce) {
  TempDir dir;
  const LocalJobLimits limits = Limits(dir, 1, 1);
  auto held = LocalJobSlot::Acquire(limits, JobClass::kLight);
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(held->held());
  EXPECT_EQ(held->index(), 0);
  EXPECT_EQ(held->ChildEnvironmentEntry(), "FARM_LOCAL_JOB_SLOT_HELD=light");
  std::atomic<int> said{0};
  std::promise<int> got;
  std::thread second([&] {
    auto slot = LocalJobSlot::Acquire(limits, JobClass::kLight, [&] { ++said; });
    got.set_value(slot.ok() ? slot->index() : -2);
  });
  auto index = got.get_future();
  EXPECT_EQ(index.wait_for(std::chrono::milliseconds(kStillWaitingMs)),
            std::future_status::timeout);
  // Moved, it still holds the slot; released, it frees it.
  LocalJobSlot moved = *std::move(held);
  EXPECT_EQ(index.wait_for(std::chrono::milliseconds(kStillWaitingMs)),
            std::future_status::timeout);
  moved.Release();
  EXPECT_FALSE(moved.held());
  EXPECT_EQ(moved.ChildEnvironmentEntry(), "");
  ASSERT_EQ(index.wait_for(std::chrono::milliseconds(kEventuallyMs)), std::future_status::ready);
  EXPECT_EQ(index.get(), 0);
  second.join();
  EXPECT_EQ(said.load(), 1);
}

TEST(LocalJobSlotTest, AJobStartedUnderASlotTakesNone) {
  TempDir dir;
  const LocalJobLimits limits = Limits(dir, 1, 1);
  auto parent = LocalJobSlot::Acquire(limits, JobClass::kHeavy);
  ASSERT_TRUE(parent.ok());
  // What the parent starts (nvcc -ccbin farm-cc) sees the variable: it does not wait for
  // the slot its parent holds.
  ASSERT_EQ(setenv(kLocalJobSlotHeldVariable, "heavy", 1), 0);
  auto child = LocalJobSlot::Acquire(limits, JobClass::kHeavy);
  unsetenv(kLocalJobSlotHeldVariable);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_FALSE(child->held());
  EXPECT_EQ(child->index(), -1);
  EXPECT_EQ(child->ChildEnvironmentEntry(), "");
}

TEST(LocalJobSlotTest, KeepAcrossExecHandsTheSlotToTheExecedProgram) {
  TempDir dir;
  const LocalJobLimits limits = Limits(dir, 1, 1);
  const std::string file = limits.dir + "/heavy-0.lock";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    auto slot = LocalJobSlot::Acquire(limits, JobClass::kHeavy);
    if (!slot.ok() || !slot->KeepAcrossExec().ok()) _exit(3);
    if (write(ready[1], "x", 1) != 1) _exit(3);
    close(ready[1]);
    execlp("sleep", "sleep", "600", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  // sleep runs (its own program now) and still holds the slot.
  for (int i = 0; i < 600; ++i) {
    std::string exe(64, '\0');
    const ssize_t n = readlink(absl::StrCat("/proc/", pid, "/exe").c_str(), exe.data(), exe.size());
    if (n > 0 && absl::StrContains(exe.substr(0, n), "sleep")) break;
    usleep(100'000);
  }
  EXPECT_TRUE(LockedForOthers(file));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_FALSE(LockedForOthers(file));
}

TEST(LocalJobSlotTest, RefusesADirectoryOthersCanWriteAndNoSlots) {
  TempDir dir;
  const std::string shared = dir.path() + "/shared";
  ASSERT_EQ(mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  auto refused = LocalJobSlot::Acquire(LocalJobLimits{1, 1, shared}, JobClass::kLight);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("Fix:"));

  auto none = LocalJobSlot::Acquire(LocalJobLimits{1, 0, dir.path() + "/s"}, JobClass::kHeavy);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.status().message(), HasSubstr("FARM_LOCAL_JOBS_HEAVY"));

  // A new directory is made private.
  auto made = LocalJobSlot::Acquire(LocalJobLimits{1, 1, dir.path() + "/a/b"}, JobClass::kLight);
  ASSERT_TRUE(made.ok()) << made.status();
  struct stat st {};
  ASSERT_EQ(stat((dir.path() + "/a/b").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(LocalJobSlotTest, AStepClosingWorkUnderWayGoesAheadOfOnesOpeningNewWork) {
  TempDir dir;
  const LocalJobLimits limits = Limits(dir, 1, 1);
  Holder running(limits, JobClass::kLight);
  ASSERT_EQ(running.Slot(kEventuallyMs), 0);
  Holder opening(limits, JobClass::kLight);  // came first
  EXPECT_FALSE(opening.Slot(kStillWaitingMs).has_value());
  Holder closing(limits, JobClass::kLight, JobPriority::kClosing);
  // The closing waiter has said so before the slot frees.
  for (int waited = 0; !LockedForOthers(limits.dir + "/light.closing"); waited += 10) {
    ASSERT_LT(waited, kEventuallyMs) << "the closing waiter never announced itself";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  running.Release();
  EXPECT_EQ(closing.Slot(kEventuallyMs), 0);
  EXPECT_FALSE(opening.Slot(kStillWaitingMs).has_value())
      << "an opening step took the slot a closing one waited for";
  closing.Release();
  EXPECT_EQ(opening.Slot(kEventuallyMs), 0);
}

TEST(LocalJobSlotTest, AnOpeningStepLeavesAFreeSlotWhileAClosingOneWaits) {
  TempDir dir;
  const LocalJobLimits limits = Limits(dir, 1, 1);
  ASSERT_TRUE(LocalJobSlot::Acquire(limits, JobClass::kLight).ok());  // makes the directory
  // A closing waiter between saying so and its first poll.
  Holder closing_waits(WaitsAt(limits.dir + "/light.closing"));
  ASSERT_EQ(closing_waits.Slot(kEventuallyMs), 0);
  Holder opening(limits, JobClass::kLight);
  EXPECT_FALSE(opening.Slot(kStillWaitingMs).has_value())
      << "an opening step took a free slot while a closing one waited";
  Holder heavy(limits, JobClass::kHeavy);  // the other class does not wait for it
  EXPECT_EQ(heavy.Slot(kEventuallyMs), 0);
  closing_waits.Release();
  EXPECT_EQ(opening.Slot(kEventuallyMs), 0);
}

TEST(LocalJobSlotTest, ALongUnitsStepGoesAheadOfAClosingOne) {
  TempDir dir;
  const LocalJobLimits limits = Limits(dir, 1, 1);
  Holder running(limits, JobClass::kHeavy);
  ASSERT_EQ(running.Slot(kEventuallyMs), 0);
  Holder long_unit_waits(WaitsAt(limits.dir + "/heavy.long-unit"));
  ASSERT_EQ(long_unit_waits.Slot(kEventuallyMs), 0);
  Holder closing(limits, JobClass::kHeavy, JobPriority::kClosing);
  running.Release();
  EXPECT_FALSE(closing.Slot(kStillWaitingMs).has_value())
      << "a closing step took the slot a long unit's step waited for";
  long_unit_waits.Release();
  EXPECT_EQ(closing.Slot(kEventuallyMs), 0);
}

TEST(LocalJobSlotTest, APriorityIsNamedByItsName) {
  for (JobPriority p : {JobPriority::kOpening, JobPriority::kClosing, JobPriority::kLongUnit}) {
    EXPECT_EQ(JobPriorityNamed(JobPriorityName(p)), p);
  }
  EXPECT_EQ(JobPriorityNamed("long-unit"), JobPriority::kLongUnit);
  EXPECT_EQ(JobPriorityNamed("urgent"), std::nullopt);
  EXPECT_EQ(JobPriorityNamed(""), std::nullopt);
}

}  // namespace
}  // namespace farm
