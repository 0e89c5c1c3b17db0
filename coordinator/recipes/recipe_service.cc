#include "coordinator/recipes/recipe_service.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/logging/logger.h"
#include "libfarm/recipes/recipe_proto.h"
#include "libfarm/rpc/request_limits.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/text/utf8.h"

namespace farm::coordinator {

std::string ResolveRecipesDir(const std::string& flag, const std::string& data_dir) {
  if (!flag.empty()) return flag;
  const std::filesystem::path in_data = std::filesystem::path(data_dir) / "recipes";
  std::error_code ec;
  if (std::filesystem::is_directory(in_data, ec)) return in_data.string();
  return FARM_SOURCE_RECIPES_DIR;
}

RecipeDirectory LoadRecipesLogged(const std::string& dir) {
  auto log = ComponentLogger("recipes");
  auto loaded = LoadRecipeDirectory(dir);
  if (!loaded.ok()) {
    log->error("{}", loaded.status().message());
    RecipeDirectory empty;
    empty.errors.push_back(loaded.status());
    return empty;
  }
  for (const absl::Status& e : loaded->errors) {
    log->error("recipe not loaded: {}", e.message());
  }
  std::vector<std::string> names;
  for (const Recipe& r : loaded->recipes) names.push_back(r.name);
  log->info("loaded {} recipe(s) from {}: {}", names.size(), dir, absl::StrJoin(names, ", "));
  return std::move(*loaded);
}

RecipeServiceImpl::RecipeServiceImpl(const RpcGate* gate, std::string dir, RecipeDirectory recipes)
    : gate_(gate), dir_(std::move(dir)), recipes_(std::move(recipes)) {}

const Recipe* RecipeServiceImpl::Find(const std::string& name) const {
  for (const Recipe& r : recipes_.recipes) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

grpc::Status RecipeServiceImpl::ListRecipes(grpc::ServerContext* context,
                                            const farm::v1::ListRecipesRequest*,
                                            farm::v1::ListRecipesResponse* response) {
  return gate_->Serve(*context, "RecipeService.ListRecipes", [&] {
    for (const Recipe& r : recipes_.recipes) *response->add_recipes() = RecipeToProto(r);
    // Errors name files, and file names are the host's bytes.
    for (const absl::Status& e : recipes_.errors) {
      response->add_load_errors(ValidUtf8OrEscaped(e.message()));
    }
    response->set_recipes_dir(ValidUtf8OrEscaped(dir_));
    return absl::OkStatus();
  });
}

grpc::Status RecipeServiceImpl::GetRecipe(grpc::ServerContext* context,
                                          const farm::v1::GetRecipeRequest* request,
                                          farm::v1::GetRecipeResponse* response) {
  return gate_->Serve(*context, "RecipeService.GetRecipe", [&] {
    FARM_RETURN_IF_ERROR(CheckFieldLength("the recipe name", request->name(), kMaxNameBytes));
    const Recipe* recipe = Find(request->name());
    if (recipe == nullptr) {
      std::vector<std::string> names;
      for (const Recipe& r : recipes_.recipes) names.push_back(r.name);
      return absl::NotFoundError(absl::StrCat(
          "no recipe named \"", request->name(), "\" in ", dir_, ": known are ",
          names.empty() ? "none" : absl::StrJoin(names, ", "), " (farmctl recipes lists them)"));
    }
    *response->mutable_recipe() = RecipeToProto(*recipe);
    return absl::OkStatus();
  });
}

}  // namespace farm::coordinator
