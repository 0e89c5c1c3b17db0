// A loaded recipe as farm.v1.Recipe, for RecipeService and its clients.
#pragma once

#include "farm/v1/recipes.pb.h"
#include "libfarm/recipes/recipe.h"

namespace farm {

farm::v1::Recipe RecipeToProto(const Recipe& recipe);

// The part of a recipe a build host needs to render and run it (name, package, file, python,
// prerequisites and the build section), back from the proto a wheel build carries. Platform,
// versions, publishing and size are the coordinator's business and stay unset.
Recipe BuildRecipeFromProto(const farm::v1::Recipe& proto);

}  // namespace farm
