// Adding the headers a compile looks up that GCC's -M does not list: ones only probed for
// (`#if __has_include(<x.h>)`) and `#pragma once` headers included again by another path
// (through a symlinked directory). In a sandbox without them those lookups would answer
// otherwise than on the host: a failed compile, or another header of the same name found.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "libfarm/cc/file_tree_builder.h"

namespace farm::cc {

// For each name in builder.include_sites(), adds DIR/NAME where it is a regular file, for DIR
// the including file's directory and each of `include_dirs` (the compile's -I/-iquote/-isystem/
// -idirafter directories: absolute, or relative to `cwd`); for __has_include names also every
// directory that holds an entry of the builder, and their ancestors, which covers the
// compiler's built-in directories. Repeats for the files this adds until nothing is new. This
// over-approximates the compiler's search, which is safe: a file present on the host at its
// own path changes nothing when it is present in the sandbox too.
//
// `precompiled_found`, when given, is set when a precompiled header (DIR/NAME.gch) lies where
// one of those names is looked up: GCC would read it instead of the header.
absl::Status AddIncludedHeaders(FileTreeBuilder& builder,
                                const std::vector<std::string>& include_dirs,
                                const std::string& cwd, bool* precompiled_found = nullptr);

}  // namespace farm::cc
