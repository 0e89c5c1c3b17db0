// A listener for the scheduler's action transitions: build progress, queue metrics. The
// scheduler calls it after each state write has landed and outside its lock, so an observer
// never sees a state the store could forget, and a slow observer delays only the call that
// caused the transition, never other scheduler work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "farm/v1/actions.pb.h"

namespace farm::coordinator {

struct ActionUpdate {
  // Increases with every update of any action. Concurrent writes may deliver two updates of
  // one action out of order; an observer keeps the one with the higher sequence.
  uint64_t sequence = 0;
  farm::v1::ActionStatus status;
  farm::v1::Requirements requirements;
};

// A finished action whose record was deleted (past its retention).
struct DeletedAction {
  std::string id;
  std::string build_id;
};

class ActionObserver {
 public:
  virtual ~ActionObserver() = default;
  // Must be quick and must not call back into the scheduler.
  virtual void OnActionsChanged(const std::vector<ActionUpdate>& updates) = 0;
  // The actions already known when the observer was added: history, not transitions.
  virtual void OnActionsLoaded(const std::vector<ActionUpdate>& updates) {
    OnActionsChanged(updates);
  }
  // Finished actions deleted from the store: nothing will be said of them again.
  virtual void OnActionsDeleted(const std::vector<DeletedAction>& /*deleted*/) {}
};

}  // namespace farm::coordinator
