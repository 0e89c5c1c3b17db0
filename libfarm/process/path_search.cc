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

}  // namespace farm
