// The host's running processes, read from /proc: for a worker finding sandboxes an earlier
// run left behind, and for tests checking that nothing outlived its action.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace farm {

struct ProcessEntry {
  pid_t pid = 0;
  uid_t uid = 0;
  std::vector<std::string> args;  // argv, from /proc/PID/cmdline; never empty
};

// Every process whose command line could be read (kernel threads have none). Processes that
// exit while the table is read are skipped.
std::vector<ProcessEntry> ListProcesses();

// True when some process's arguments, joined by spaces, contain `text`.
bool AnyProcessCommandLineContains(const std::string& text);

}  // namespace farm
