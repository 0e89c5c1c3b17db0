#include "libfarm/workers/worker_state.h"

namespace farm {

std::string WorkerStateName(farm::v1::WorkerState state) {
  switch (state) {
    case farm::v1::WORKER_STATE_ONLINE:
      return "online";
    case farm::v1::WORKER_STATE_DRAINING:
      return "draining";
    case farm::v1::WORKER_STATE_OFFLINE:
      return "offline";
    case farm::v1::WORKER_STATE_LOST:
      return "lost";
    default:
      return "unknown";
  }
}

}  // namespace farm
