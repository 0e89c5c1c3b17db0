#include "libfarm/process/path_search.h"

#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace farm {
namespace {

bool IsExecutableFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> FindOnPath(const std::string& name, absl::string_view path,
                                      const std::function<bool(const std::string&)>& accept) {
  auto usable = [&](const std::string& candidate) {
    return IsExecutableFile(candidate) && (!accept || accept(candidate));
  };
  if (name.find('/') != std::string::npos) {
    return usable(name) ? std::optional<std::string>(name) : std::nullopt;
  }
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (usable(candidate)) return candidate;
  }
  return std::nullopt;
}

std::string SelfExecutable() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

bool IsSameFile(const std::string& candidate, const std::string& self) {
  std::error_code ec;
  return !self.empty() && std::filesystem::equivalent(candidate, self, ec);
}

std::string AbsoluteNormalPath(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

}  // namespace farm
