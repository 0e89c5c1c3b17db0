// Reading the make rules `gcc -M` and `clang -M` write ("t.o: a.cc b.h \" ...), escapes and
// all, into the list of files they name.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace farm::cc {

// The prerequisites of every rule in `text`, in order, each once; targets (words ending in an
// unescaped ':') are left out. Undoes the compilers' escapes: "\ " (with doubled backslashes
// before it), "\#", "\:" and "$$"; a backslash before a newline continues the line.
std::vector<std::string> ParseMakeDependencies(absl::string_view text);

}  // namespace farm::cc
