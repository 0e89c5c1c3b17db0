// One shell-script line per build step that echoes the step before running it, shared by the
// build script and the environment step so the build log shows every step the same way.
#pragma once

#include <string>
#include <vector>

namespace farm::worker {

// argv as /bin/sh words, each single-quoted: recipe strings never reach the shell unquoted.
std::string QuotedArgv(const std::vector<std::string>& argv);

// Appends `printf '+ words'` (as `sh -x` would echo it), then the command itself.
void AppendEchoedCommand(std::string& script, const std::vector<std::string>& argv);

}  // namespace farm::worker
