// The disk a set of paths takes: what an action has written, measured while it runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace farm {

// Bytes allocated to the files under `paths` (each a file or a directory walked whole), each
// inode counted once, links never followed, other filesystems never entered; what cannot be
// read counts 0. Sparse files count what they really take.
uint64_t DiskUsage(const std::vector<std::string>& paths);

}  // namespace farm
