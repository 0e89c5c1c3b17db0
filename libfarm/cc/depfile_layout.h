// A compile's Make dependency file written again with other paths in it, laid out as the
// compiler itself would have written them. GCC and clang wrap the rule's line by width (GCC
// at 72 columns, clang at 75, each its own way), so changing a path's length moves the line
// breaks: a text substitution would not give the bytes the compiler writes for those paths.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/cc/cc_command_line.h"

namespace farm::cc {

// Changes one path (a target or a prerequisite, as the file spells it); an error refuses.
using DepfilePathMap = std::function<absl::StatusOr<std::string>(absl::string_view)>;

// `text` with every target and prerequisite passed through `map`, in `family`'s layout.
// FAILED_PRECONDITION when `text` is not one rule (plus -MP's phony rules) in exactly the
// layout farm-cc writes for `family` (it checks by writing the unchanged paths first), or
// spells a name with an escape (a space, '#', '$'): farm-cc then does not write it anew.
absl::StatusOr<std::string> RewriteDepfilePaths(absl::string_view text, CompilerFamily family,
                                                const DepfilePathMap& map);

}  // namespace farm::cc
