#include "libfarm/recipes/stack_file.h"

#include <toml++/toml.h>

#include "absl/strings/str_cat.h"
#include "libfarm/recipes/recipe.h"

namespace farm {
namespace {

absl::Status Error(const std::string& path, const toml::source_region& at,
                   const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, at.begin.line > 0 ? absl::StrCat(":", at.begin.line) : "", ": ", what,
                   ". Fix: write packages = [\"pytorch-2.9.1\", \"torchvision-0.24.1\"] and "
                   "optionally archs = \"7.5;9.0\""));
}

}  // namespace

absl::StatusOr<StackFile> LoadStackFile(const std::string& path) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return Error(path, e.source(), std::string(e.description()));
  }
  StackFile out;
  for (auto&& [key, node] : root) {
    const std::string k(key.str());
    if (k == "archs") {
      if (!node.is_string()) return Error(path, node.source(), "archs must be a string");
      out.archs = node.as_string()->get();
    } else if (k == "packages") {
      if (!node.is_array()) return Error(path, node.source(), "packages must be an array");
      for (const toml::node& item : *node.as_array()) {
        if (!item.is_string()) return Error(path, item.source(), "packages are strings");
        const std::string ref = item.as_string()->get();
        if (auto parsed = ParseRecipeRef(ref); !parsed.ok()) {
          return Error(path, item.source(), std::string(parsed.status().message()));
        }
        out.packages.push_back(ref);
      }
    } else {
      return Error(path, key.source(), absl::StrCat("unknown key \"", k, "\""));
    }
  }
  if (out.packages.empty()) return Error(path, root.source(), "no packages");
  return out;
}

}  // namespace farm
