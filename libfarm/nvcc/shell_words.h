// Splitting command text into words the way a POSIX shell would, for nvcc options files
// and the sub-commands `nvcc --dryrun` prints.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

// Splits `text` on unquoted whitespace (newlines included). Single quotes keep everything
// literally; double quotes keep whitespace and honour backslash before `"`, `\`, `$` and
// "`"; an unquoted backslash escapes the next character. `$VAR` is left as written: the
// caller decides what to expand. An unterminated quote is an error.
absl::StatusOr<std::vector<std::string>> SplitShellWords(absl::string_view text);

// Replaces `$NAME` and `${NAME}` in `word` with values from `vars` (unknown names become
// empty, as in sh).
std::string ExpandShellVariables(absl::string_view word,
                                 const std::vector<std::pair<std::string, std::string>>& vars);

// `word` single-quoted for sh, so the shell passes it through unchanged.
std::string ShellQuote(absl::string_view word);

}  // namespace farm
