// Progress of one compile shard (the actions of a build that share a shard name), kept
// incrementally: each action's previous contribution is taken out and its new one put in,
// so an update costs the same for a shard of ten actions or of ten thousand.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "farm/v1/actions.pb.h"
#include "farm/v1/builds.pb.h"

namespace farm::coordinator {

// An action's status reduced to what build progress needs.
struct ActionFacts {
  std::string id;
  farm::v1::ActionState state = farm::v1::ACTION_STATE_UNSPECIFIED;
  bool succeeded = false;  // completed with exit code 0
  bool cache_hit = false;
  std::string worker;
  std::string worker_cpu_arch;
  double cpu_seconds = 0, wall_seconds = 0;
  absl::Time submitted, started, finished;  // InfinitePast when unset
  int32_t exit_code = 0;
  std::string error;  // stderr tail of a failed run, or why it could not run

  static ActionFacts From(const farm::v1::ActionStatus& status);
  bool terminal() const;
  bool failed() const;
};

class ShardProgress {
 public:
  void Add(const ActionFacts& action);
  // Takes out a contribution Add made before (the action's previous state).
  void Remove(const ActionFacts& action);

  uint32_t total() const { return total_; }
  uint32_t queued() const { return queued_; }
  uint32_t running() const { return running_; }
  uint32_t failed() const { return failed_; }
  uint32_t cancelled() const { return cancelled_; }
  // No action left to run.
  bool finished() const { return total_ > 0 && queued_ == 0 && running_ == 0; }
  absl::Time started() const { return first_started_; }
  absl::Time last_finished() const { return last_finished_; }
  // The earliest failure, for the build's reason.
  const std::optional<ActionFacts>& first_failure() const { return first_failure_; }

  farm::v1::Shard ToProto(const std::string& name) const;

 private:
  uint32_t total_ = 0, queued_ = 0, running_ = 0, done_ = 0, failed_ = 0, cached_ = 0,
           cancelled_ = 0;
  double cpu_seconds_ = 0, wall_seconds_ = 0;
  std::map<std::string, int> workers_;  // worker -> actions counted
  std::map<std::string, std::string> worker_cpu_archs_;  // worker -> CPU arch last seen
  // Only ever move earlier/later: a start that happened stays the shard's start even when
  // its action is requeued, and finished actions never change again.
  absl::Time first_started_ = absl::InfiniteFuture();
  absl::Time last_finished_ = absl::InfinitePast();
  std::optional<ActionFacts> first_failure_;
};

}  // namespace farm::coordinator
