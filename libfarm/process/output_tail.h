// The end of what a command printed, for error messages that must stay short.
#pragma once

#include <string>

namespace farm {

// The last `max_lines` lines of `text` (trailing whitespace dropped), at most the last 4000
// bytes of them, cut between characters.
std::string TailLines(const std::string& text, int max_lines);

}  // namespace farm
