// Paths inside an action's scratch directory. Everything a client or worker names is
// checked here: no absolute paths, no "..", nothing that could leave the directory.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace farm {

// OK for "a/b.cu", "out/k.cubin"; INVALID_ARGUMENT naming the path for "/etc/passwd",
// "../x", "a/../../x", "", "a//b", "a/./b", and paths with NUL bytes.
absl::Status ValidateRelativePath(absl::string_view path);

}  // namespace farm
