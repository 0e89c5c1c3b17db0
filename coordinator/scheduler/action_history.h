// What the farm expects an action to cost, learnt from earlier runs of the same translation
// unit and arch (Action.history_key) in the same history scope (history_scope.h: what one
// tenant's builds teach is theirs): its wall time, to start the longest first, and its peak
// RAM, to place it where that much is free. Kept in the action_history table under
// "SCOPE\nKEY"; not thread-safe (the scheduler calls it under its lock).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "coordinator/state_store.h"
#include "farm/v1/actions.pb.h"
#include "farm/v1/state.pb.h"

namespace farm::coordinator {

struct ExpectedCost {
  double seconds = 0;
  uint64_t peak_ram_bytes = 0;  // 0: unknown, nothing reserved
  bool learnt = false;          // from the action's own history, not its input size
};

class ActionHistory {
 public:
  // At most `max_keys` keys are held in memory (the oldest learnt go first); each costs about
  // 100 bytes.
  explicit ActionHistory(size_t max_keys = 200'000) : max_keys_(max_keys) {}

  absl::Status Load(const StateStore& store);

  // The action's history when its key has one in the first of `scopes` that has it; otherwise
  // the launcher's hint (Action.expected_seconds, a recipe's cost hints) when it sent one, else
  // seconds from its input size at the rate learnt over every run so far (unknown RAM). At
  // least the RAM its requirements name.
  ExpectedCost Expect(const farm::v1::Action& action, const std::vector<std::string>& scopes) const;

  // The learnt wall seconds of a run under `history_key` in the first of `scopes` that has
  // one; 0 when none was learnt.
  double LearntSeconds(const std::vector<std::string>& scopes,
                       const std::string& history_key) const;

  // Learns from a clean run and stages the key's new history in `scope` into `batch` (nothing
  // per key for an empty scope).
  void Learn(const farm::v1::Action& action, const std::string& scope,
             const farm::v1::ActionResult& result, StateBatch& batch);

  size_t size() const { return by_key_.size(); }

 private:
  void Keep(const std::string& key, const farm::v1::ActionHistory& history);
  // The first of `scopes` holding `history_key`'s history; null when none does.
  const farm::v1::ActionHistory* Find(const std::vector<std::string>& scopes,
                                      const std::string& history_key) const;

  const size_t max_keys_;
  std::map<std::string, farm::v1::ActionHistory> by_key_;  // by "SCOPE\nKEY"
  std::map<uint64_t, std::string> key_by_age_;             // learn order, for the bound
  std::map<std::string, uint64_t> age_by_key_;
  uint64_t next_age_ = 0;
  // Wall seconds per input byte over every run learnt in this process.
  double learnt_seconds_ = 0;
  double learnt_input_bytes_ = 0;
};

// Sum of an action's input sizes.
uint64_t InputBytes(const farm::v1::Action& action);

}  // namespace farm::coordinator
