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
//
// A probe through a wrapper macro whose name says so (`FMT_HAS_INCLUDE(<string_view>)`, any
// identifier holding has_include or HAS_INCLUDE) counts as a probe. `unread`, when given, is
// set when the text may look a header up by a name this cannot read, so that only the
// compiler can tell which files it reads: an include or probe whose name a macro computes
// (`#include HEADER`, `__has_include(NAME)` outside the definition of such a wrapper), a
// wrapper of __has_include named otherwise, a directive spelled with a comment or line
// splice before its name or after a comment on its line, `%:` or `??=` (digraph, trigraph),
// `#embed` and `#pragma GCC dependency`.
std::vector<IncludedName> IncludedNames(absl::string_view text, bool* unread = nullptr);

}  // namespace farm::cc
