// What a source or header's text says that the file list of a compile does not: whether it
// reads the clock, and which headers it includes or probes for by name.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace farm::cc {

// Whether `text` names __DATE__, __TIME__ or __TIMESTAMP__: a compile that expands one differs
// run to run (and host to host), so it stays local.
bool MentionsTimeMacros(absl::string_view text);

struct IncludedName {
  std::string name;    // as written between the quotes or angle brackets
  bool probe = false;  // __has_include / __has_include_next, not #include
};

// The header names `text` names in #include, #include_next and #import directives and in
// __has_include / __has_include_next probes, in order, every branch alike. GCC's -M lists
// neither a header only probed for nor a `#pragma once` header included again by another
// path (a symlinked directory), yet the compile looks both up: a sandbox holding only -M's
// files would answer those lookups otherwise. Names made by macros are not seen.
std::vector<IncludedName> IncludedNames(absl::string_view text);

}  // namespace farm::cc
