#include "tests/support/demo_recipe.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/support/farm_processes.h"

namespace farm::testing {

std::string DemoRecipe(const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& replacements) {
  std::string text = ReadFile(FARM_SOURCE_DIR "/recipes/demo.toml");
  text = absl::StrReplaceAll(text, {{"name = \"demo\"", absl::StrCat("name = \"", name, "\"")}});
  const std::string path_line = "path = \"../examples/demo-cuda-ext\"";
  EXPECT_NE(text.find(path_line), std::string::npos) << "recipes/demo.toml changed its source";
  text = absl::StrReplaceAll(
      text, {{path_line, absl::StrCat("path = \"", FARM_SOURCE_DIR, "/examples/demo-cuda-ext\"")}});
  for (const auto& [from, to] : replacements) {
    EXPECT_NE(text.find(from), std::string::npos) << from;
    text = absl::StrReplaceAll(text, {{from, to}});
  }
  return text;
}

}  // namespace farm::testing
