// What an action's inputs weigh before anything is laid out: every file counted at each place
// it appears, since a tree may name one stored blob many times and each occurrence can become
// a file on the worker. The coordinator refuses an action over its limit at submission; the
// worker checks again before writing (what it writes depends on its layout: worker/).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "farm/v1/actions.pb.h"

namespace farm {

struct Footprint {
  int64_t entries = 0;  // files, links and directories
  uint64_t bytes = 0;   // file sizes, repeats included
};

Footprint FootprintOf(const farm::v1::FileTree& tree);
// The action's plain inputs (its trees are blobs the caller reads and adds).
Footprint FootprintOf(const farm::v1::Action& action);

Footprint operator+(Footprint a, const Footprint& b);

// RESOURCE_EXHAUSTED when `footprint` holds more than `max_bytes`, naming the sizes, the
// limit and `setting` (what sets the limit, e.g. "farm-coordinator --max-action-input"), with
// the fix.
absl::Status CheckFootprint(absl::string_view what, const Footprint& footprint, uint64_t max_bytes,
                            absl::string_view setting);

}  // namespace farm
