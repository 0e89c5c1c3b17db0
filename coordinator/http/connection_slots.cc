#include "coordinator/http/connection_slots.h"

namespace farm::coordinator {

ConnectionSlots::ConnectionSlots(const HttpLimits& limits)
    : max_open_(limits.max_connections),
      max_open_per_client_(limits.max_connections_per_client),
      max_waiting_(limits.MaxWaiting()),
      max_waiting_per_client_(limits.MaxWaitingPerClient()) {}

bool ConnectionSlots::Admit(const std::string& client) {
  absl::MutexLock lock(&mu_);
  Counts& mine = per_client_[client];
  if (open_ >= max_open_ || mine.open >= max_open_per_client_) {
    if (mine.open == 0) per_client_.erase(client);
    return false;
  }
  ++open_;
  ++mine.open;
  return true;
}

void ConnectionSlots::Release(const std::string& client) {
  absl::MutexLock lock(&mu_);
  --open_;
  auto it = per_client_.find(client);
  if (it != per_client_.end() && --it->second.open <= 0) per_client_.erase(it);
}

bool ConnectionSlots::StartWaiting(const std::string& client) {
  absl::MutexLock lock(&mu_);
  auto it = per_client_.find(client);
  if (it == per_client_.end() || waiting_ >= max_waiting_ ||
      it->second.waiting >= max_waiting_per_client_) {
    return false;
  }
  ++waiting_;
  ++it->second.waiting;
  return true;
}

void ConnectionSlots::StopWaiting(const std::string& client) {
  absl::MutexLock lock(&mu_);
  --waiting_;
  auto it = per_client_.find(client);
  if (it != per_client_.end()) --it->second.waiting;
}

}  // namespace farm::coordinator
