#include "libfarm/recipes/recipe_loader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "libfarm/recipes/recipe_proto.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

constexpr const char* kValid = R"(name = "demo"
package = "demo-pkg"
description = "d"
versions = ["1.0", { version = "2.0", source = { kind = "git", url = "https://x/y.git", tag = "release-{version}" } }]

[source]
kind = "git"
url = "https://example.com/demo.git"
tag = "v{version}"
submodules = true

[python]
version = "3.10"
requirements = ["numpy<2.0"]

[platform]
cpu_archs = ["aarch64", "x86_64"]
glibc_max = "2.35"
cuda_min = "12.4"
cuda_max = "13.0"

[build]
prepare = [["pip", "install", "-r", "requirements.txt"], "git submodule sync"]
command = "python{python} setup.py bdist_wheel"
wheel = "dist/*.whl"
job_memory_gib = 4.5

[build.env]
TORCH_CUDA_ARCH_LIST = "{archs}"
MAX_JOBS = "{jobs}"

[[publish]]
kind = "builtin"

[[publish]]
kind = "repository"
url = "https://repo.example.com/legacy/"
password_env = "REPO_TOKEN"

[[publish]]
kind = "command"
command = ["gh", "release", "upload", "v{version}", "{wheel}"]

[size]
base_mib = 30
per_arch_mib = 150
)";

absl::StatusOr<Recipe> ParseVariant(absl::string_view from, absl::string_view to) {
  return ParseRecipe(absl::StrReplaceAll(kValid, {{from, to}}), "/recipes/demo.toml");
}

void ExpectError(const absl::StatusOr<Recipe>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok()) << "expected an error containing " << parts.front();
  for (const std::string& part : parts) {
    EXPECT_NE(r.status().message().find(part), std::string::npos)
        << "missing \"" << part << "\" in: " << r.status().message();
  }
}

TEST(RecipeLoaderTest, ReadsEveryField) {
  auto r = ParseRecipe(kValid, "/recipes/demo.toml");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->name, "demo");
  EXPECT_EQ(r->package, "demo-pkg");
  ASSERT_EQ(r->versions.size(), 2u);
  EXPECT_EQ(r->versions[0].source.TagFor("1.0"), "v1.0");
  EXPECT_TRUE(r->versions[0].source.submodules);
  EXPECT_EQ(r->versions[1].source.git_url, "https://x/y.git");
  EXPECT_EQ(r->versions[1].source.TagFor("2.0"), "release-2.0");
  EXPECT_EQ(r->FindVersion("2.0"), &r->versions[1]);
  EXPECT_EQ(r->FindVersion("3.0"), nullptr);
  EXPECT_EQ(r->python, "3.10");
  EXPECT_EQ(r->python_requirements, std::vector<std::string>{"numpy<2.0"});
  EXPECT_EQ(r->platform.cpu_archs, (std::vector<std::string>{"aarch64", "x86_64"}));
  EXPECT_EQ(r->platform.ManylinuxCeilingTag("aarch64"), "manylinux_2_35_aarch64");
  EXPECT_EQ(r->platform.cuda.ToString(), "12.4–13.0");
  ASSERT_EQ(r->build.prepare.size(), 2u);
  EXPECT_EQ(r->build.prepare[0].argv.size(), 4u);
  EXPECT_TRUE(r->build.prepare[1].IsShell());
  EXPECT_TRUE(r->build.command.IsShell());
  EXPECT_EQ(r->build.env.at("MAX_JOBS"), "{jobs}");
  EXPECT_DOUBLE_EQ(r->build.job_memory_gib, 4.5);
  ASSERT_EQ(r->publish.size(), 3u);
  EXPECT_EQ(r->publish[1].KindName(), "repository");
  EXPECT_EQ(r->publish[1].username, "__token__");
  EXPECT_EQ(r->publish[1].password_env, "REPO_TOKEN");
  EXPECT_EQ(r->publish[2].command.argv.back(), "{wheel}");
  EXPECT_DOUBLE_EQ(*r->size.EstimateMib(3), 480.0);
}

TEST(RecipeLoaderTest, AVersionTableMayBuildWithItsOwnPythonAndEnvironment) {
  // torchvision 0.24 against the farm's torch 2.9, 0.26 against torch 2.11 from PyPI.
  auto r = ParseVariant(
      "versions = [\"1.0\", { version = \"2.0\", source = { kind = \"git\", url = "
      "\"https://x/y.git\", tag = \"release-{version}\" } }]",
      "versions = [\"1.0\", { version = \"2.0\", python = { version = \"3.11\", requirements "
      "= [\"numpy>=2\"], farm_requirements = [\"torch==2.11.0\"], farm_fallback = { torch = { "
      "cuda = \"13.0\" } } }, env = { PYTORCH_VERSION = \"2.11.0\", MAX_JOBS = \"{farm_jobs}\" "
      "} }]");
  ASSERT_TRUE(r.ok()) << r.status();
  // 1.0 builds with the file's recipe.
  EXPECT_EQ(r->versions[0].own_recipe, nullptr);
  EXPECT_EQ(&r->ForVersion(r->versions[0]), &*r);
  // 2.0 with its own: its [python] in place of the file's, its env over [build.env], the
  // file's [source] (it names none), itself as the one version.
  const Recipe& two = r->ForVersion(r->versions[1]);
  ASSERT_NE(&two, &*r);
  EXPECT_EQ(two.python, "3.11");
  EXPECT_EQ(two.python_requirements, std::vector<std::string>{"numpy>=2"});
  ASSERT_EQ(two.farm_requirements.size(), 1u);
  EXPECT_EQ(two.farm_requirements[0].Text(), "torch==2.11.0");
  EXPECT_EQ(two.build.env.at("PYTORCH_VERSION"), "2.11.0");
  EXPECT_EQ(two.build.env.at("MAX_JOBS"), "{farm_jobs}");
  EXPECT_EQ(two.build.env.at("TORCH_CUDA_ARCH_LIST"), "{archs}");
  ASSERT_EQ(two.versions.size(), 1u);
  EXPECT_EQ(two.versions[0].version, "2.0");
  EXPECT_EQ(two.versions[0].source.git_url, "https://example.com/demo.git");
  EXPECT_EQ(two.name, "demo");
  EXPECT_EQ(two.publish.size(), 3u);
  // The file's own recipe is unchanged.
  EXPECT_EQ(r->python, "3.10");
  EXPECT_EQ(r->build.env.count("PYTORCH_VERSION"), 0u);

  // Checked as a whole recipe: a bad key or placeholder in the version's tables is an error.
  ExpectError(ParseVariant("versions = [\"1.0\", {",
                           "versions = [\"1.0\", { python = { "
                           "version = \"3.11\", requirement = [] }, "),
              {"demo.toml:", "python.requirement", "unknown key"});
  ExpectError(
      ParseVariant("versions = [\"1.0\", {", "versions = [\"1.0\", { env = { X = \"{job}\" }, "),
      {"demo.toml:", "unknown placeholder {job}"});
  ExpectError(ParseVariant("versions = [\"1.0\", {", "versions = [\"1.0\", { env = 3, "),
              {"versions.env", "must be a table"});
}

TEST(RecipeLoaderTest, UnknownKeysAreErrorsWithFileLineAndKey) {
  ExpectError(ParseVariant("[build]\n", "[biuld]\n"),
              {"/recipes/demo.toml:", "unknown key \"biuld\"", "valid keys are"});
  ExpectError(
      ParseVariant("job_memory_gib = 4.5", "job_memory = 4.5"),
      {"/recipes/demo.toml:26:1: build.job_memory", "unknown key \"job_memory\" in [build]"});
  ExpectError(ParseVariant("glibc_max = \"2.35\"", "glibc_ceiling = \"2.35\""),
              {"platform.glibc_ceiling", "unknown key"});
  ExpectError(ParseVariant("password_env", "token"), {"publish.token", "unknown key"});
}

TEST(RecipeLoaderTest, UnknownPlaceholdersAreErrors) {
  ExpectError(ParseVariant("MAX_JOBS = \"{jobs}\"", "MAX_JOBS = \"{job}\""),
              {"demo.toml:30:12: build.env.MAX_JOBS", "unknown placeholder {job}", "{jobs}"});
  ExpectError(ParseVariant("tag = \"v{version}\"", "tag = \"v{ver}\""),
              {"source.tag", "unknown placeholder {ver}"});
  ExpectError(ParseVariant("\"{wheel}\"]", "\"{whl}\"]"), {"publish.command", "{whl}"});
  ExpectError(ParseVariant("python{python} setup", "python{py} setup"), {"build.command", "{py}"});
}

TEST(RecipeLoaderTest, StrictNvccIsABooleanThatSurvivesTheProto) {
  auto lax = ParseRecipe(kValid, "/recipes/demo.toml");
  ASSERT_TRUE(lax.ok()) << lax.status();
  EXPECT_FALSE(lax->build.strict_nvcc);
  auto strict = ParseVariant("job_memory_gib = 4.5", "job_memory_gib = 4.5\nstrict_nvcc = true");
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_TRUE(strict->build.strict_nvcc);
  EXPECT_TRUE(BuildRecipeFromProto(RecipeToProto(*strict)).build.strict_nvcc);
  EXPECT_FALSE(BuildRecipeFromProto(RecipeToProto(*lax)).build.strict_nvcc);
  auto strict_cc = ParseVariant("job_memory_gib = 4.5", "job_memory_gib = 4.5\nstrict_cc = true");
  ASSERT_TRUE(strict_cc.ok()) << strict_cc.status();
  EXPECT_TRUE(strict_cc->build.strict_cc);
  EXPECT_FALSE(strict_cc->build.strict_nvcc);
  EXPECT_TRUE(BuildRecipeFromProto(RecipeToProto(*strict_cc)).build.strict_cc);
  ExpectError(ParseVariant("job_memory_gib = 4.5", "job_memory_gib = 4.5\nstrict_cc = 1"),
              {"build.strict_cc", "must be true or false"});
  ExpectError(ParseVariant("job_memory_gib = 4.5", "job_memory_gib = 4.5\nstrict_nvcc = \"yes\""),
              {"build.strict_nvcc", "must be true or false, not a string"});
}

TEST(RecipeLoaderTest, ASmokeSectionIsReadWithItsPolicyDefaults) {
  auto none = ParseRecipe(kValid, "/recipes/demo.toml");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->smoke.has_value());
  EXPECT_FALSE(RecipeToProto(*none).has_smoke());
  auto plain =
      ParseVariant("[size]", "[smoke]\ncommand = \"python -c 'import demo' {sm}\"\n[size]");
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(plain->smoke.has_value());
  EXPECT_EQ(plain->smoke->command.shell, "python -c 'import demo' {sm}");
  EXPECT_TRUE(plain->smoke->block_on_failure);
  EXPECT_FALSE(plain->smoke->require_gpu);
  auto marked = ParseVariant(
      "[size]",
      "[smoke]\ncommand = [\"python\", \"-m\", \"pytest\"]\nrequirements = [\"pytest\"]\n"
      "on_failure = \"mark\"\nrequire_gpu = true\n[size]");
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_FALSE(marked->smoke->block_on_failure);
  EXPECT_TRUE(marked->smoke->require_gpu);
  const farm::v1::Recipe proto = RecipeToProto(*marked);
  EXPECT_EQ(proto.smoke().on_failure(), "mark");
  EXPECT_TRUE(proto.smoke().require_gpu());
  EXPECT_EQ(proto.smoke().requirements(0), "pytest");
  EXPECT_EQ(proto.smoke().command().argv(2), "pytest");

  ExpectError(ParseVariant("[size]", "[smoke]\non_failure = \"block\"\n[size]"),
              {"smoke.command", "missing"});
  ExpectError(ParseVariant("[size]", "[smoke]\ncommand = \"true\"\non_failure = \"warn\"\n[size]"),
              {"smoke.on_failure", "\"warn\" is not a policy", "\"mark\""});
  ExpectError(ParseVariant("[size]", "[smoke]\ncommand = \"true {archs}\"\n[size]"),
              {"smoke.command", "unknown placeholder {archs}"});
  ExpectError(ParseVariant("[size]", "[smoke]\ncommand = \"true\"\nrequire_gpu = 1\n[size]"),
              {"smoke.require_gpu", "must be true or false"});
}

TEST(RecipeLoaderTest, GpuWaitBoundsHowLongARequiredGpuIsWaitedFor) {
  auto smoke = [](const std::string& keys) {
    return ParseVariant("[size]", "[smoke]\ncommand = \"true\"\n" + keys + "[size]");
  };
  auto plain = smoke("require_gpu = true\n");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->smoke->gpu_wait, kDefaultGpuWait);
  EXPECT_EQ(RecipeToProto(*plain).smoke().gpu_wait_seconds(), 6u * 3600);
  auto set = smoke("gpu_wait = \"1h30m\"\nrequire_gpu = true\n");  // in either order
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->smoke->gpu_wait, absl::Minutes(90));
  EXPECT_EQ(RecipeToProto(*set).smoke().gpu_wait_seconds(), 5400u);

  for (const std::string bad : {"6 hours", "6", "0s", "-1h", "1.5s", "721h", ""}) {
    ExpectError(smoke("require_gpu = true\ngpu_wait = \"" + bad + "\"\n"),
                {"smoke.gpu_wait", "\"" + bad + "\" is not a duration", "Fix:", "\"6h\""});
  }
  ExpectError(smoke("require_gpu = true\ngpu_wait = 3600\n"),
              {"smoke.gpu_wait", "must be a string"});
  // Without require_gpu nothing waits: the key would do nothing, so it is refused.
  ExpectError(smoke("gpu_wait = \"6h\"\n"), {"smoke.gpu_wait", "require_gpu = true", "Fix:"});
}

TEST(RecipeLoaderTest, BadValuesNameTheKeyAndTheFix) {
  ExpectError(ParseVariant("job_memory_gib = 4.5", "job_memory_gib = \"4\""),
              {"build.job_memory_gib", "must be a number"});
  ExpectError(ParseVariant("cuda_max = \"13.0\"", "cuda_max = \"12.0\""),
              {"platform.cuda_max", "below cuda_min 12.4"});
  ExpectError(ParseVariant("cuda_min = \"12.4\"", "cuda_min = 12.4"),
              {"platform.cuda_min", "must be a string"});
  ExpectError(ParseVariant("glibc_max = \"2.35\"", "glibc_max = \"35\""),
              {"platform.glibc_max", "like \"2.35\""});
  ExpectError(ParseVariant("\"aarch64\", \"x86_64\"", "\"arm64\""),
              {"platform.cpu_archs", "unknown CPU arch \"arm64\"", "aarch64"});
  ExpectError(ParseVariant("MAX_JOBS = \"{jobs}\"", "MAX_JOBS = 4"),
              {"build.env.MAX_JOBS", "must be a string"});
  ExpectError(ParseVariant("kind = \"git\"\nurl", "kind = \"svn\"\nurl"),
              {"source.kind", "unknown source kind \"svn\""});
  ExpectError(ParseVariant("kind = \"builtin\"", "kind = \"s3\""),
              {"publish.kind", "unknown publish kind"});
  ExpectError(ParseVariant("\"REPO_TOKEN\"", "\"pypi-AgEIcHlwaS5vcmc\""),
              {"publish.password_env", "NAME of an environment variable"});
  ExpectError(ParseVariant("versions = [\"1.0\",", "versions = [\"1.0\", \"1.0\","),
              {"versions", "1.0 is listed twice"});
  ExpectError(ParseVariant("name = \"demo\"", "name = \"other\""),
              {"name", "differs from the file name \"demo.toml\""});
  ExpectError(ParseVariant("dist/*.whl", "../*.whl"), {"build.wheel", "relative glob"});
  ExpectError(ParseVariant("[python]\nversion = \"3.10\"", "[python]\nversion = \"3\""),
              {"python.version"});
  ExpectError(ParseVariant("[build]\n", "[build]\ncommand2 = 1\n"), {"build.command2"});
}

// [python] farm_requirements: one exact version of a wheel the farm builds, kept apart from
// the package index's requirements, and carried to the build host in the recipe's proto.
TEST(RecipeLoaderTest, FarmRequirementsPinOneVersionWithoutALabel) {
  auto r = ParseVariant("requirements = [\"numpy<2.0\"]",
                        "requirements = [\"numpy<2.0\"]\nfarm_requirements = [\"torch==2.9.1\"]");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->farm_requirements.size(), 1u);
  EXPECT_EQ(r->farm_requirements[0].project, "torch");
  EXPECT_EQ(r->farm_requirements[0].version, "2.9.1");
  const Recipe back = BuildRecipeFromProto(RecipeToProto(*r));
  ASSERT_EQ(back.farm_requirements.size(), 1u);
  EXPECT_EQ(back.farm_requirements[0].Text(), "torch==2.9.1");

  ExpectError(ParseVariant("requirements = [\"numpy<2.0\"]",
                           "requirements = [\"numpy<2.0\"]\nfarm_requirements = [\"torch>=2.9\"]"),
              {"python.farm_requirements", "\"torch>=2.9\" is not a farm requirement",
               "NAME==VERSION", "Fix: pin one version"});
  ExpectError(
      ParseVariant("requirements = [\"numpy<2.0\"]",
                   "requirements = [\"numpy<2.0\"]\nfarm_requirements = [\"torch==2.9.1+cu130\"]"),
      {"python.farm_requirements", "local label"});
  ExpectError(ParseVariant("requirements = [\"numpy<2.0\"]",
                           "requirements = [\"numpy<2.0\"]\nfarm_requirements = [\"NumPy==1.26\"]"),
              {"python.farm_requirements", "NumPy is in requirements too", "Fix: keep it in one"});
  ExpectError(ParseVariant("requirements = [\"numpy<2.0\"]",
                           "requirements = [\"numpy<2.0\"]\nfarm_requirements = [\"torch==2.9.1\", "
                           "\"Torch==2.9.0\"]"),
              {"python.farm_requirements", "named twice"});
}

// [python.farm_fallback.<project>]: a package index (or the host's) and the CUDA release its
// wheels were built for, for a project of farm_requirements; strict like the rest.
TEST(RecipeLoaderTest, AFarmFallbackNamesAnIndexAndTheCudaReleaseOfItsWheels) {
  const std::string with =
      "requirements = [\"numpy<2.0\"]\nfarm_requirements = [\"torch==2.11.0\"]";
  auto fallback = [&](const std::string& table) {
    return ParseVariant("requirements = [\"numpy<2.0\"]", with + "\n" + table);
  };
  auto r = fallback(
      "[python.farm_fallback.Torch]\nindex = \"https://download.pytorch.org/whl/cu130\"\n"
      "cuda = \"13.0\"");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->farm_requirements[0].fallback.has_value());
  EXPECT_EQ(r->farm_requirements[0].fallback->index_url, "https://download.pytorch.org/whl/cu130");
  EXPECT_EQ(r->farm_requirements[0].fallback->cuda.ToString(), "13.0");
  // No index: the build host's.
  auto host = fallback("[python.farm_fallback.torch]\ncuda = \"13.0\"");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->farm_requirements[0].fallback->index_url, "");
  EXPECT_EQ(FallbackIndexName(""), "the build host's package index (PIP_INDEX_URL, else PyPI)");
  // Without a fallback table there is none.
  auto none = ParseVariant("requirements = [\"numpy<2.0\"]", with);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->farm_requirements[0].fallback.has_value());

  ExpectError(fallback("[python.farm_fallback.torch]\nindex = \"https://x/simple\""),
              {"python.farm_fallback.torch.cuda", "missing required key \"cuda\""});
  ExpectError(fallback("[python.farm_fallback.torch]\ncuda = \"thirteen\""),
              {"python.farm_fallback.torch.cuda"});
  ExpectError(fallback("[python.farm_fallback.torch]\nindex = \"\"\ncuda = \"13.0\""),
              {"python.farm_fallback.torch.index", "is not a package index URL",
               "leave index out for the build host's package index"});
  ExpectError(fallback("[python.farm_fallback.torch]\nindex = \"pypi\"\ncuda = \"13.0\""),
              {"python.farm_fallback.torch.index", "Fix: give a PEP 503 simple index"});
  ExpectError(fallback("[python.farm_fallback.torch]\ncuda = \"13.0\"\nurl = \"x\""),
              {"python.farm_fallback.torch.url", "unknown key"});
  ExpectError(fallback("[python.farm_fallback.torchvision]\ncuda = \"13.0\""),
              {"python.farm_fallback.torchvision", "no farm requirement is for torchvision",
               "farm_requirements names torch"});
  ExpectError(ParseVariant("requirements = [\"numpy<2.0\"]", with + "\nfarm_fallbacks = 1"),
              {"python.farm_fallbacks", "unknown key"});
}

TEST(FarmRequirementTest, MatchesByProjectAndReleaseNotByLabel) {
  auto r = ParseFarmRequirement("torch==2.9");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(FarmRequirementMatches(*r, "Torch", "2.9.0"));
  EXPECT_TRUE(FarmRequirementMatches(*r, "torch", "2.9+cu130.sm75"));
  EXPECT_FALSE(FarmRequirementMatches(*r, "torch", "2.9.1"));
  EXPECT_FALSE(FarmRequirementMatches(*r, "torchvision", "2.9"));
}

// The hook runs on the coordinator with the values of a wheel the build named: shell text
// is refused when the recipe loads, with the argv form as the fix (issue 24).
TEST(RecipeLoaderTest, APublishHookIsAnArgvArrayNeverShellText) {
  const std::string hook =
      "command = [\"gh\", \"release\", \"upload\", \"v{version}\", \"{wheel}\"]";
  ExpectError(ParseVariant(hook, "command = \"gh release upload v1 {wheel}\""),
              {"/recipes/demo.toml:", "publish.command: a shell string is refused here",
               "Fix: write it as an argv array",
               R"(["sh", "-c", "gh release upload v1 \"$1\"", "sh", "{wheel}"])"});
  ExpectError(ParseVariant(hook, "command = \"cp /tmp/x /tmp/y\""),
              {"publish.command: a shell string is refused here"});
  ExpectError(ParseVariant(hook, "command = [\"sh\", \"-c\", \"gh release upload v1 {wheel}\"]"),
              {"publish.command", "the shell script \"gh release upload v1 {wheel}\" holds {wheel}",
               "Fix: pass the value as an argument after the script"});
  auto argv = ParseVariant(
      hook, "command = [\"sh\", \"-c\", \"gh release upload v1 \\\"$1\\\"\", \"sh\", \"{wheel}\"]");
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_EQ(argv->publish[2].command.argv.back(), "{wheel}");
  // Build commands run on the build host, not the coordinator: shell strings stay allowed.
  EXPECT_TRUE(ParseRecipe(kValid, "/recipes/demo.toml")->build.command.IsShell());
}

TEST(RecipeLoaderTest, MissingPiecesAreNamed) {
  ExpectError(ParseVariant("package = \"demo-pkg\"\n", ""), {"package", "missing required key"});
  ExpectError(ParseVariant("command = \"python{python} setup.py bdist_wheel\"\n", ""),
              {"build.command", "missing"});
  ExpectError(ParseRecipe("name = \"demo\"\npackage = \"d\"\n", "/r/demo.toml"), {"versions"});
}

TEST(RecipeLoaderTest, SyntaxErrorsCarryLineAndColumn) {
  ExpectError(ParseVariant("description = \"d\"", "description = \"d"),
              {"/recipes/demo.toml:3:", "TOML syntax error"});
}

TEST(RecipeLoaderTest, UploadSourceResolvesItsPathAgainstTheRecipe) {
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("recipes_test_", ::getpid());
  fs::create_directories(dir / "recipes");
  fs::create_directories(dir / "tree");
  const std::string text = absl::StrReplaceAll(
      kValid, {{"kind = \"git\"\nurl = \"https://example.com/demo.git\"\ntag = \"v{version}\"\n"
                "submodules = true",
                "kind = \"upload\"\npath = \"../tree\""}});
  auto r = ParseRecipe(text, (dir / "recipes" / "demo.toml").string());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->versions[0].source.KindName(), "upload");
  EXPECT_EQ(r->versions[0].source.default_dir, fs::canonical(dir / "tree").string());

  auto missing = ParseRecipe(absl::StrReplaceAll(text, {{"../tree", "../nope"}}),
                             (dir / "recipes" / "demo.toml").string());
  ExpectError(missing, {"source.path", "is not a directory"});
  ExpectError(ParseRecipe(absl::StrReplaceAll(text, {{"path = \"../tree\"", "tag = \"x\""}}),
                          (dir / "recipes" / "demo.toml").string()),
              {"source.tag", "only a git source"});
  fs::remove_all(dir);
}

TEST(RecipeLoaderTest, APypiSourceNamesItsProjectAndIndexOrTakesThePackage) {
  const std::string git =
      "kind = \"git\"\nurl = \"https://example.com/demo.git\"\ntag = \"v{version}\"\n"
      "submodules = true";
  auto plain = ParseVariant(git, "kind = \"pypi\"");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->versions[0].source.KindName(), "pypi");
  EXPECT_EQ(plain->versions[0].source.pypi_project, "demo-pkg");  // the package
  EXPECT_EQ(plain->versions[0].source.pypi_index, "");
  EXPECT_EQ(plain->versions[1].source.KindName(), "git");  // its own source
  auto named = ParseVariant(
      git, "kind = \"pypi\"\nproject = \"Demo.Src\"\nindex = \"https://mirror/simple/\"");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->versions[0].source.pypi_project, "Demo.Src");
  const farm::v1::Recipe proto = RecipeToProto(*named);
  EXPECT_EQ(proto.versions(0).source().kind(), "pypi");
  EXPECT_EQ(proto.versions(0).source().pypi_project(), "Demo.Src");
  EXPECT_EQ(proto.versions(0).source().pypi_index(), "https://mirror/simple/");

  ExpectError(ParseVariant(git, "kind = \"pypi\"\nurl = \"https://x/y.git\""),
              {"source.url", "a pypi source takes only `project`"});
  ExpectError(ParseVariant(git, "kind = \"pypi\"\nproject = \"a b\""),
              {"source.project", "is not a PyPI project name"});
  ExpectError(ParseVariant(git, "kind = \"pypi\"\nindex = \"pypi.org/simple\""),
              {"source.index", "is not an index URL"});
  ExpectError(ParseVariant("submodules = true", "submodules = true\nproject = \"x\""),
              {"source.project", "only a pypi source"});
}

TEST(RecipeLoaderTest, AnArchiveSourceNamesItsUrlAndOptionallyItsSha256) {
  const std::string git =
      "kind = \"git\"\nurl = \"https://example.com/demo.git\"\ntag = \"v{version}\"\n"
      "submodules = true";
  const std::string url = "https://github.com/pytorch/vision/archive/refs/tags/v{version}.tar.gz";
  auto plain = ParseVariant(git, "kind = \"archive\"\nurl = \"" + url + "\"");
  ASSERT_TRUE(plain.ok()) << plain.status();
  const RecipeSource& source = plain->versions[0].source;
  EXPECT_EQ(source.KindName(), "archive");
  EXPECT_EQ(source.ArchiveUrlFor("1.0"),
            "https://github.com/pytorch/vision/archive/refs/tags/v1.0.tar.gz");
  EXPECT_EQ(source.archive_sha256, "");
  EXPECT_EQ(plain->versions[1].source.KindName(), "git");  // its own source

  // Per version, with its digest (upper case is read as lower).
  const std::string digest(64, 'A');
  auto pinned = ParseRecipe(
      absl::StrReplaceAll(
          kValid, {{"{ version = \"2.0\", source = { kind = \"git\", url = \"https://x/y.git\", "
                    "tag = \"release-{version}\" } }",
                    "{ version = \"2.0\", source = { kind = \"archive\", url = "
                    "\"http://mirror/x-2.0.tar.xz?dl=1\", sha256 = \"" +
                        digest + "\" } }"}}),
      "/recipes/demo.toml");
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(pinned->versions[1].source.archive_url, "http://mirror/x-2.0.tar.xz?dl=1");
  EXPECT_EQ(pinned->versions[1].source.archive_sha256, std::string(64, 'a'));
  const farm::v1::Recipe proto = RecipeToProto(*pinned);
  EXPECT_EQ(proto.versions(1).source().kind(), "archive");
  EXPECT_EQ(proto.versions(1).source().archive_url(), "http://mirror/x-2.0.tar.xz?dl=1");
  EXPECT_EQ(proto.versions(1).source().archive_sha256(), std::string(64, 'a'));

  auto archive = [&](const std::string& keys) {
    return ParseVariant(git, "kind = \"archive\"\n" + keys);
  };
  ExpectError(archive(""), {"source.url", "missing"});
  ExpectError(archive("url = \"ftp://x/y.tar.gz\""), {"source.url", "is not an http(s) URL"});
  ExpectError(archive("url = \"https://x/y.zip\""), {"source.url", "names no archive file"});
  ExpectError(archive("url = \"https://x/archive/\""), {"source.url", "names no archive file"});
  ExpectError(archive("url = \"https://x/{tag}.tar.gz\""), {"source.url", "{tag}"});
  ExpectError(archive("url = \"https://x/a.tar.gz\"\nsha256 = \"abc\""),
              {"source.sha256", "is not a sha256"});
  ExpectError(archive("url = \"https://x/a.tar.gz\"\ntag = \"v1\""),
              {"source.tag", "only a git source"});
  ExpectError(archive("url = \"https://x/a.tar.gz\"\nproject = \"x\""),
              {"source.project", "only a pypi source"});
  ExpectError(ParseVariant("submodules = true", "submodules = true\nsha256 = \"" + digest + "\""),
              {"source.sha256", "only an archive source"});
  ExpectError(ParseVariant(git, "kind = \"pypi\"\nsha256 = \"" + digest + "\""),
              {"source.sha256", "a pypi source takes only"});

  // One digest for several versions fits none but one.
  const std::string shared = absl::StrReplaceAll(
      kValid, {{git, "kind = \"archive\"\nurl = \"" + url + "\"\nsha256 = \"" + digest + "\""},
               {"versions = [\"1.0\", ", "versions = [\"1.0\", \"1.1\", "}});
  ExpectError(ParseRecipe(shared, "/recipes/demo.toml"),
              {"source.sha256", "2 versions take this source", "Fix:"});
}

TEST(RecipeLoaderTest, DirectoryLoadsGoodFilesAndReportsBadOnes) {
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("recipes_dir_", ::getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "demo.toml") << kValid;
  std::ofstream(dir / "broken.toml") << "name = \"broken\"\nbogus = 1\n";
  std::ofstream(dir / "notes.txt") << "not a recipe";
  auto loaded = LoadRecipeDirectory(dir.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->recipes.size(), 1u);
  EXPECT_EQ(loaded->recipes[0].name, "demo");
  ASSERT_EQ(loaded->errors.size(), 1u);
  EXPECT_NE(loaded->errors[0].message().find("broken.toml:2:1: bogus"), std::string::npos)
      << loaded->errors[0];
  EXPECT_FALSE(LoadRecipeDirectory((dir / "missing").string()).ok());
  fs::remove_all(dir);
}

TEST(RecipeRefTest, SplitsAtTheLastDashBeforeADigit) {
  auto a = ParseRecipeRef("pytorch-2.9.1");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->name, "pytorch");
  EXPECT_EQ(a->version, "2.9.1");
  auto b = ParseRecipeRef("demo-cuda-ext-0.1.0");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->name, "demo-cuda-ext");
  EXPECT_EQ(b->version, "0.1.0");
  EXPECT_FALSE(ParseRecipeRef("pytorch").ok());
  EXPECT_FALSE(ParseRecipeRef("-2.0").ok());
}

}  // namespace
}  // namespace farm
