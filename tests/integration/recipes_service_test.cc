// The coordinator loads recipes at start: a bad file is logged by name and skipped, the rest
// are served (token required) and `farmctl recipes` lists them.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTiny = R"(name = "tiny"
package = "tiny-pkg"
versions = ["1.0", "1.1", { version = "1.2", source = { kind = "pypi", project = "tiny-src" } }]
[source]
kind = "upload"
[python]
version = "3.11"
[platform]
cpu_archs = ["x86_64", "aarch64"]
glibc_max = "2.36"
cuda_min = "12.9"
cuda_max = "13.0"
[build]
command = ["python{python}", "-m", "pip", "wheel", "."]
)";

TEST(RecipesServiceTest, BadRecipeIsLoggedAndTheOthersAreServed) {
  TempDir dir("recipes");
  const fs::path recipes = dir.path() / "recipes";
  fs::create_directories(recipes);
  fs::copy_file(fs::path(FARM_SOURCE_TREE) / "recipes" / "pytorch.toml", recipes / "pytorch.toml");
  std::ofstream(recipes / "tiny.toml") << kTiny;
  std::ofstream(recipes / "broken.toml") << "name = \"broken\"\npackage = \"b\"\nverions = []\n";

  auto farm =
      TestFarm::Start(dir.path(), {.coordinator_args = {"--recipes-dir", recipes.string()}});
  ASSERT_TRUE(farm.ok()) << farm.status();
  const std::vector<std::string> target = {"--coordinator", (*farm)->address(), "--token-file",
                                           (*farm)->admin_token_file()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), target.begin(), target.end());
    return args;
  };

  CommandResult json = RunFarmctl(with({"--json", "recipes"}));
  ASSERT_EQ(json.exit_code, 0) << json.stderr_text;
  const nlohmann::json listed = nlohmann::json::parse(json.stdout_text);
  ASSERT_EQ(listed["recipes"].size(), 2u) << listed.dump(2);
  EXPECT_EQ(listed["recipes"][0]["name"], "pytorch");
  EXPECT_EQ(listed["recipes"][0]["package"], "torch");
  EXPECT_EQ(listed["recipes"][0]["versions"][0]["version"], "2.9.1");
  EXPECT_EQ(listed["recipes"][0]["versions"][0]["source"]["kind"], "git");
  EXPECT_EQ(listed["recipes"][0]["versions"][0]["source"]["tag"], "v{version}");
  EXPECT_EQ(listed["recipes"][0]["glibc_max"], "2.35");
  EXPECT_EQ(listed["recipes"][0]["cuda_min"], "12.6");
  EXPECT_EQ(listed["recipes"][0]["size_estimate_mib"]["per_arch"], 150.0);
  EXPECT_EQ(listed["recipes"][1]["name"], "tiny");
  const nlohmann::json pypi = listed["recipes"][1]["versions"][2]["source"];
  EXPECT_EQ(pypi, nlohmann::json({{"kind", "pypi"}, {"project", "tiny-src"}, {"index", ""}}))
      << pypi.dump();
  ASSERT_EQ(listed["load_errors"].size(), 1u);
  const std::string error = listed["load_errors"][0];
  EXPECT_NE(error.find("broken.toml:3:1: verions: unknown key"), std::string::npos) << error;
  EXPECT_NE(ReadFile((*farm)->coordinator().log_path())
                .find("recipe not loaded: " + (recipes / "broken.toml").string()),
            std::string::npos)
      << ReadFile((*farm)->coordinator().log_path());

  CommandResult text = RunFarmctl(with({"recipes"}));
  ASSERT_EQ(text.exit_code, 0) << text.stderr_text;
  for (const char* expected : {"NAME", "pytorch", "torch", "2.9.1", "git", "12.6–13.0", "2.35",
                               "aarch64", "tiny", "1.0, 1.1, 1.2", "upload", "pypi", "12.9–13.0"}) {
    EXPECT_NE(text.stdout_text.find(expected), std::string::npos) << expected << " missing from:\n"
                                                                  << text.stdout_text;
  }
  EXPECT_NE(text.stderr_text.find("not loaded:"), std::string::npos) << text.stderr_text;

  // Wrong token: refused with exit 3, and the coordinator keeps serving.
  const std::string bad_token = dir / "bad-token";
  std::ofstream(bad_token) << "not-the-farm-token-0123456789abcdef\n";
  CommandResult refused =
      RunFarmctl({"--coordinator", (*farm)->address(), "--token-file", bad_token, "recipes"});
  EXPECT_EQ(refused.exit_code, 3) << refused.stderr_text;
  EXPECT_EQ(RunFarmctl(with({"status"})).exit_code, 0);
}

TEST(RecipesServiceTest, DefaultsToTheSourceTreeRecipes) {
  TempDir dir("recipes_default");
  auto farm = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(farm.ok()) << farm.status();
  CommandResult json = RunFarmctl({"--coordinator", (*farm)->address(), "--token-file",
                                   (*farm)->admin_token_file(), "--json", "recipes"});
  ASSERT_EQ(json.exit_code, 0) << json.stderr_text;
  const nlohmann::json listed = nlohmann::json::parse(json.stdout_text);
  EXPECT_EQ(listed["recipes_dir"], std::string(FARM_SOURCE_TREE) + "/recipes");
  // Every shipped recipe is served, each from its file, and none fails to load.
  std::set<std::string> shipped, served, names;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(FARM_SOURCE_TREE) + "/recipes")) {
    if (e.path().extension() == ".toml") shipped.insert(e.path().string());
  }
  for (const auto& r : listed["recipes"]) {
    served.insert(r["file"].get<std::string>());
    names.insert(r["name"].get<std::string>());
  }
  EXPECT_EQ(served, shipped) << listed.dump(2);
  EXPECT_TRUE(names.count("demo") && names.count("pytorch")) << listed.dump(2);
  EXPECT_TRUE(listed["load_errors"].empty()) << listed.dump(2);
}

}  // namespace
}  // namespace farm::testing
