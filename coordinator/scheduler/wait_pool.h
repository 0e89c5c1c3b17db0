// Waits for actions that hold no thread while they wait. ActionService.Wait is a long poll:
// a launcher's compile may take minutes, and a thousand launchers wait at once. On the
// synchronous server each wait would hold one of --grpc-max-calls threads; here a wait is an
// entry answered by one thread, woken whenever the scheduler's actions change and at the
// nearest deadline.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/scheduler/scheduler.h"
#include "farm/v1/types.pb.h"

namespace farm::coordinator {

class WaitPool {
 public:
  // The statuses when every action is terminal or the wait's deadline passed, or the error
  // (an unknown action). Called once, from the pool's thread (or Add's, when already done).
  using Answer = std::function<void(absl::StatusOr<std::vector<farm::v1::ActionStatus>>)>;

  // `scheduler` outlives the pool; the pool becomes its change listener.
  explicit WaitPool(Scheduler* scheduler);
  ~WaitPool();
  WaitPool(const WaitPool&) = delete;
  WaitPool& operator=(const WaitPool&) = delete;

  // Answers once every action of `ids` is terminal, or at `deadline` with their statuses then.
  // `gone` (optional) says the caller left (a launcher killed mid-call): its wait is answered
  // CANCELLED at the next change instead of holding its place until the deadline.
  void Add(std::vector<std::string> ids, absl::Time deadline, Answer answer,
           std::function<bool()> gone = nullptr);
  // Answers every wait now with the statuses it has (a client polls again), and later ones at
  // once: before the server stops, which waits for every call it has open.
  void Stop();
  size_t waiting() const;

 private:
  struct Waiting {
    std::vector<std::string> ids;
    absl::Time deadline;
    Answer answer;
    std::function<bool()> gone;
    std::map<std::string, farm::v1::ActionStatus> stored;
  };
  // Polls `w`; its answer when it has one.
  std::optional<absl::StatusOr<std::vector<farm::v1::ActionStatus>>> Poll(Waiting& w, bool final);
  void Run();

  Scheduler* const scheduler_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Waiting>> waiting_ ABSL_GUARDED_BY(mu_);
  bool changed_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Taken by the pool's thread while it polls (out of waiting_); counted by waiting().
  size_t polling_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace farm::coordinator
