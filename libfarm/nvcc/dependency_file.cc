#include "libfarm/nvcc/dependency_file.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace farm {

std::string NvccDependencyText(const std::vector<std::vector<LineMarkerFile>>& preprocessed,
                               const DependencyOptions& options) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  for (const auto& one : preprocessed) {
    for (const LineMarkerFile& file : one) {
      if (options.nonsystem && file.system) continue;
      if (seen.insert(file.path).second) {
        files.push_back(absl::StrReplaceAll(file.path, {{" ", "\\ "}}));
      }
    }
  }
  // nvcc warns about a repeated -MT and keeps the last.
  std::string text = options.targets.empty() ? std::string() : options.targets.back();
  absl::StrAppend(&text, " :");
  for (size_t i = 0; i < files.size(); ++i) {
    absl::StrAppend(&text, i == 0 ? " " : " \\\n    ", files[i]);
  }
  text += "\n";
  if (options.phony_targets) {
    for (size_t i = 1; i < files.size(); ++i) absl::StrAppend(&text, "\n", files[i], ":\n");
  }
  return text;
}

}  // namespace farm
