// Reads recipes from TOML. Strict: an unknown key, a wrong type, an unknown placeholder or an
// impossible policy is an error naming the file, line, key and fix, so a typo never
// silently changes a build. The format is documented in recipes/README.md.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libfarm/recipes/recipe.h"

namespace farm {

// Parses one recipe. `path` names it in errors, gives its expected name (the file stem)
// and anchors relative source paths.
absl::StatusOr<Recipe> ParseRecipe(absl::string_view toml_text, const std::string& path);

absl::StatusOr<Recipe> LoadRecipeFile(const std::string& path);

struct RecipeDirectory {
  std::vector<Recipe> recipes;       // sorted by name
  std::vector<absl::Status> errors;  // one per file that failed; each message names the file
};

// Loads every *.toml in `dir` (not recursive). A bad file is reported in `errors` and the
// others still load. Errors only when `dir` itself cannot be read.
absl::StatusOr<RecipeDirectory> LoadRecipeDirectory(const std::string& dir);

}  // namespace farm
