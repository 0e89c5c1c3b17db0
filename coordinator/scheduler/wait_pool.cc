#include "coordinator/scheduler/wait_pool.h"

#include <algorithm>
#include <utility>

namespace farm::coordinator {

WaitPool::WaitPool(Scheduler* scheduler) : scheduler_(scheduler) {
  // Under the scheduler's lock: only flags a change (lock order scheduler, then pool).
  scheduler_->SetChangeListener([this] {
    absl::MutexLock lock(&mu_);
    changed_ = true;
  });
  thread_ = std::thread([this] { Run(); });
}

WaitPool::~WaitPool() {
  Stop();
  scheduler_->SetChangeListener(nullptr);
}

void WaitPool::Add(std::vector<std::string> ids, absl::Time deadline, Answer answer,
                   std::function<bool()> gone) {
  auto w = std::make_unique<Waiting>();
  w->ids = std::move(ids);
  w->deadline = deadline;
  w->answer = std::move(answer);
  w->gone = std::move(gone);
  // Already done: answered on the caller's thread, never queued.
  if (auto now = Poll(*w, absl::Now() >= w->deadline); now.has_value()) {
    w->answer(*std::move(now));
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      waiting_.push_back(std::move(w));
      changed_ = true;
      return;
    }
  }
  // The pool is stopping: the statuses as they are.
  w->answer(*Poll(*w, /*final=*/true));
}

void WaitPool::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    changed_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

size_t WaitPool::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_.size() + polling_;
}

std::optional<absl::StatusOr<std::vector<farm::v1::ActionStatus>>> WaitPool::Poll(Waiting& w,
                                                                                  bool final) {
  auto statuses = scheduler_->PollWait(w.ids, w.stored, final);
  if (!statuses.ok()) return statuses.status();
  if (!statuses->has_value()) return std::nullopt;
  return **std::move(statuses);
}

void WaitPool::Run() {
  while (true) {
    std::vector<std::unique_ptr<Waiting>> batch;
    bool stopping = false;
    {
      absl::MutexLock lock(&mu_);
      absl::Time next = absl::InfiniteFuture();
      for (const auto& w : waiting_) next = std::min(next, w->deadline);
      // Woken by a change, a new wait or Stop; else at the nearest deadline.
      mu_.AwaitWithDeadline(absl::Condition(&changed_), next);
      changed_ = false;
      stopping = stopping_;
      batch.swap(waiting_);
      polling_ = batch.size();
    }
    const absl::Time now = absl::Now();
    std::vector<std::unique_ptr<Waiting>> keep;
    std::vector<
        std::pair<std::unique_ptr<Waiting>, absl::StatusOr<std::vector<farm::v1::ActionStatus>>>>
        answers;
    for (auto& w : batch) {
      if (w->gone && w->gone()) {
        answers.emplace_back(std::move(w), absl::CancelledError("the caller left"));
        continue;
      }
      auto answer = Poll(*w, stopping || now >= w->deadline);
      if (answer.has_value()) {
        answers.emplace_back(std::move(w), *std::move(answer));
      } else {
        keep.push_back(std::move(w));
      }
    }
    {
      absl::MutexLock lock(&mu_);
      for (auto& w : keep) waiting_.push_back(std::move(w));
      polling_ = 0;
    }
    // Outside the lock: an answer finishes a call, which may take gRPC's time.
    for (auto& [w, statuses] : answers) w->answer(std::move(statuses));
    if (stopping) {
      absl::MutexLock lock(&mu_);
      if (waiting_.empty()) return;  // Adds after Stop are answered on their own thread
    }
  }
}

}  // namespace farm::coordinator
