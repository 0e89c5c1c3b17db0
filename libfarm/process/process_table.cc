#include "libfarm/process/process_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace farm {

std::vector<ProcessEntry> ListProcesses() {
  namespace fs = std::filesystem;
  std::vector<ProcessEntry> processes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    struct stat st {};
    if (::stat(entry.path().c_str(), &st) != 0) continue;
    // POSIX reads: a process exiting meanwhile makes them fail (ESRCH) instead of throwing.
    const int fd = ::open((entry.path() / "cmdline").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    std::string cmdline;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;) {
      cmdline.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    std::vector<std::string> args = absl::StrSplit(cmdline, '\0', absl::SkipEmpty());
    if (args.empty()) continue;
    processes.push_back(
        {.pid = static_cast<pid_t>(std::stol(name)), .uid = st.st_uid, .args = std::move(args)});
  }
  return processes;
}

bool AnyProcessCommandLineContains(const std::string& text) {
  for (const ProcessEntry& p : ListProcesses()) {
    if (absl::StrJoin(p.args, " ").find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace farm
