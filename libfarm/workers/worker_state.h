// Names of worker states as users see them (tables, JSON, logs).
#pragma once

#include <string>

#include "farm/v1/types.pb.h"

namespace farm {

// "online", "draining", "offline", "lost".
std::string WorkerStateName(farm::v1::WorkerState state);

}  // namespace farm
