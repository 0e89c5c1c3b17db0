// How many connections the HTTP port holds, per client address and in all, and how many
// of them wait on their client (HttpLimits::MaxWaiting): the counts GuardedHttpServer
// admits connections and slow requests by. Thread-safe.
#pragma once

#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "coordinator/http/http_limits.h"

namespace farm::coordinator {

class ConnectionSlots {
 public:
  explicit ConnectionSlots(const HttpLimits& limits);

  // A new connection from `client`: false when the client or the server holds as many as
  // allowed. Each true is matched by one Release.
  bool Admit(const std::string& client);
  void Release(const std::string& client);

  // One of `client`'s connections starts waiting on it: false when the client or the server
  // already has as many waiting as allowed. Each true is matched by one StopWaiting.
  bool StartWaiting(const std::string& client);
  void StopWaiting(const std::string& client);

 private:
  struct Counts {
    int open = 0;
    int waiting = 0;
  };

  const int max_open_;
  const int max_open_per_client_;
  const int max_waiting_;
  const int max_waiting_per_client_;
  absl::Mutex mu_;
  int open_ ABSL_GUARDED_BY(mu_) = 0;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Counts> per_client_ ABSL_GUARDED_BY(mu_);
};

}  // namespace farm::coordinator
