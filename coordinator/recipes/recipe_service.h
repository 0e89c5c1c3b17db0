// farm.v1.RecipeService: serves the recipes loaded at start (read-only afterwards).
#pragma once

#include <string>

#include "coordinator/rpc_gate.h"
#include "farm/v1/recipes.grpc.pb.h"
#include "libfarm/recipes/recipe_loader.h"

namespace farm::coordinator {

// The directory the coordinator reads recipes from: `flag` when given; else
// <data-dir>/recipes when it exists; else the recipes/ folder of the source tree this
// binary was built from (FARM_SOURCE_RECIPES_DIR), so a build tree works out of the box.
std::string ResolveRecipesDir(const std::string& flag, const std::string& data_dir);

// Loads `dir`, logging each bad file (by name, with the reason) without failing: the other
// recipes still load and the coordinator keeps serving. An unreadable directory is logged
// too and yields no recipes.
RecipeDirectory LoadRecipesLogged(const std::string& dir);

class RecipeServiceImpl final : public farm::v1::RecipeService::Service {
 public:
  RecipeServiceImpl(const RpcGate* gate, std::string dir, RecipeDirectory recipes);

  grpc::Status ListRecipes(grpc::ServerContext* context,
                           const farm::v1::ListRecipesRequest* request,
                           farm::v1::ListRecipesResponse* response) override;
  grpc::Status GetRecipe(grpc::ServerContext* context, const farm::v1::GetRecipeRequest* request,
                         farm::v1::GetRecipeResponse* response) override;

  const RecipeDirectory& recipes() const { return recipes_; }
  const std::string& dir() const { return dir_; }
  // nullptr when no recipe has that name.
  const Recipe* Find(const std::string& name) const;

 private:
  const RpcGate* gate_;
  const std::string dir_;
  const RecipeDirectory recipes_;  // immutable after construction: no lock needed
};

}  // namespace farm::coordinator
