// The shipped demo recipe (recipes/demo.toml) rewritten for a test's own recipes directory.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace farm::testing {

// recipes/demo.toml named `name`, its source tree made absolute (the test's recipes live
// elsewhere) and `replacements` applied, e.g. a narrower CUDA range or another build
// command. Each replaced text must occur (a gtest failure says which does not).
std::string DemoRecipe(const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& replacements = {});

// The body of the [source] table DemoRecipe writes: replace it to give a test recipe another
// source (a PyPI sdist, a release archive).
inline constexpr char kDemoRecipeSource[] =
    "kind = \"upload\"                          # farmctl submit --source DIR, else this tree\n"
    "path = \"" FARM_SOURCE_DIR "/examples/demo-cuda-ext\"";

}  // namespace farm::testing
