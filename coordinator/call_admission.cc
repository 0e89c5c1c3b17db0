#include "coordinator/call_admission.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "libfarm/rpc/retry.h"

namespace farm::coordinator {

CallAdmission::CallAdmission(int max_waiting, MetricsRegistry* metrics)
    : max_waiting_(std::max(1, max_waiting)),
      max_per_caller_(std::max(1, max_waiting / 2)),
      metrics_(metrics) {}

CallAdmission::Ticket::Ticket(Ticket&& other) noexcept
    : admission_(std::exchange(other.admission_, nullptr)), caller_(std::move(other.caller_)) {}

CallAdmission::Ticket& CallAdmission::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    if (admission_ != nullptr) admission_->Release(caller_);
    admission_ = std::exchange(other.admission_, nullptr);
    caller_ = std::move(other.caller_);
  }
  return *this;
}

CallAdmission::Ticket::~Ticket() {
  if (admission_ != nullptr) admission_->Release(caller_);
}

absl::StatusOr<CallAdmission::Ticket> CallAdmission::AdmitLongPoll(const std::string& caller) {
  std::string refusal;
  {
    absl::MutexLock lock(&mu_);
    // Callers refused lately still want a place: they count toward the share of the others.
    const absl::Time now = absl::Now();
    for (auto it = refused_lately_.begin(); it != refused_lately_.end();) {
      it = now - it->second > kRefusedMemory ? refused_lately_.erase(it) : std::next(it);
    }
    std::set<std::string> wanting;
    for (const auto& [name, n] : per_caller_) wanting.insert(name);
    for (const auto& [name, at] : refused_lately_) wanting.insert(name);
    wanting.insert(caller);
    const int share =
        std::max(1, std::min(max_per_caller_, max_waiting_ / static_cast<int>(wanting.size())));
    int& mine = per_caller_[caller];
    if (waiting_ >= max_waiting_) {
      refusal = absl::StrCat(waiting_, " calls are waiting, its limit (4 x --grpc-max-calls)");
    } else if (mine >= share) {
      refusal = absl::StrCat("this token holds ", mine, " waiting calls, its share (",
                             wanting.size(), " tokens want places)");
    } else {
      ++waiting_;
      ++mine;
    }
    if (mine == 0) per_caller_.erase(caller);
    if (refusal.empty()) {
      refused_lately_.erase(caller);
    } else {
      refused_lately_[caller] = now;
    }
    ShowWaiting();
  }
  if (refusal.empty()) return Ticket(this, caller);
  if (metrics_ != nullptr) {
    metrics_
        ->GetCounter("farm_rpc_busy_total",
                     "Long polls answered 'busy' (UNAVAILABLE) for a client to retry.")
        ->Increment();
  }
  return absl::UnavailableError(
      absl::StrCat(kCoordinatorBusy, ": ", refusal,
                   "; retry after a pause (farm clients do). Fix: none "
                   "needed; a larger --grpc-max-calls takes on more at once"));
}

int CallAdmission::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}

void CallAdmission::Release(const std::string& caller) {
  absl::MutexLock lock(&mu_);
  --waiting_;
  auto it = per_caller_.find(caller);
  if (it != per_caller_.end() && --it->second <= 0) per_caller_.erase(it);
  ShowWaiting();
}

void CallAdmission::ShowWaiting() {
  if (metrics_ == nullptr) return;
  metrics_->GetGauge("farm_rpc_waiting_calls", "Long polls (Wait) in progress.")
      ->Set(static_cast<double>(waiting_));
}

}  // namespace farm::coordinator
