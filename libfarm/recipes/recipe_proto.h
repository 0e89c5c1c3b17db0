// A loaded recipe as farm.v1.Recipe, for RecipeService and its clients.
#pragma once

#include "farm/v1/recipes.pb.h"
#include "libfarm/recipes/recipe.h"

namespace farm {

farm::v1::Recipe RecipeToProto(const Recipe& recipe);

}  // namespace farm
