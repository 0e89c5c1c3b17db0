#include "worker/echoed_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/nvcc/shell_words.h"

namespace farm::worker {

std::string QuotedArgv(const std::vector<std::string>& argv) {
  std::vector<std::string> quoted;
  for (const auto& a : argv) quoted.push_back(ShellQuote(a));
  return absl::StrJoin(quoted, " ");
}

// printf, not echo: dash's echo interprets backslashes.
void AppendEchoedCommand(std::string& script, const std::vector<std::string>& argv) {
  absl::StrAppend(&script, "printf '%s\\n' ", ShellQuote(absl::StrCat("+ ", QuotedArgv(argv))),
                  "\n", QuotedArgv(argv), "\n");
}

}  // namespace farm::worker
