// Finding a program on a PATH-style list, the way execvp would.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace farm {

// The first "<dir>/<name>" over the ':'-separated `path` that is an executable regular file
// and that `accept` (when given) agrees to; nullopt when there is none. A `name` with a '/'
// is not searched: it is returned when executable.
std::optional<std::string> FindOnPath(
    const std::string& name, absl::string_view path,
    const std::function<bool(const std::string&)>& accept = nullptr);

// What a launcher finding its compiler needs: this process's executable (/proc/self/exe;
// "" when unreadable), whether `candidate` is that file (any link or path to it), and `path`
// made absolute and normalized, links kept.
std::string SelfExecutable();
bool IsSameFile(const std::string& candidate, const std::string& self);
std::string AbsoluteNormalPath(const std::string& path);

}  // namespace farm
