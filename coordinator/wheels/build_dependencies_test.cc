#include "coordinator/wheels/build_dependencies.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_replace.h"
#include "libfarm/recipes/python_environment.h"

namespace farm::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<std::string> kSms = {"sm_75", "sm_80", "sm_90", "sm_121"};

farm::v1::Worker Host(const std::string& name, const std::string& cpu_arch = "aarch64") {
  farm::v1::Worker w;
  w.set_name(name);
  auto* caps = w.mutable_capabilities();
  caps->set_os("linux");
  caps->set_cpu_arch(cpu_arch);
  caps->set_glibc("2.35");
  auto* tk = caps->add_cuda();
  tk->set_version("13.0");
  for (const auto& sm : kSms) tk->add_sms(sm);
  // pytorch.toml's Python, and Debian 12's (the torch 2.11 versions' own [python]).
  for (const char* version : {"3.10", "3.11"}) {
    auto* p = caps->add_python();
    p->set_version(version);
    p->set_path(absl::StrCat("/usr/bin/python", version));
  }
  return w;
}

Recipe RecipeOf(const std::string& name, const std::string& package, const std::string& version) {
  Recipe r;
  r.name = name;
  r.package = package;
  r.file = "recipes/" + name + ".toml";
  r.versions.push_back({version, RecipeSource{.kind = RecipeSource::Kind::kGit,
                                              .git_url = "https://example.invalid/x.git",
                                              .tag_pattern = "v{version}"}});
  r.platform.cpu_archs = {"aarch64"};
  r.platform.glibc_max = DottedVersion{{2, 35}};
  r.platform.cuda = CudaRange{{12, 6}, {13, 0}};
  r.python = "3.10";
  r.python_requirements = {"wheel"};
  r.publish.push_back(PublishTarget{});
  return r;
}

class BuildDependenciesTest : public ::testing::Test {
 protected:
  BuildDependenciesTest() {
    recipes_.recipes.push_back(RecipeOf("torchlike", "torch", "2.9.1"));
    Recipe vision = RecipeOf("vision", "torchvision", "0.24.1");
    vision.farm_requirements.push_back(*ParseFarmRequirement("torch==2.9.1"));
    recipes_.recipes.push_back(vision);
  }

  PlannedBuild Plan(const std::string& ref, const std::string& archs) {
    auto planned = PlanWheelBuild(ref, archs, recipes_, {Host("grace")});
    EXPECT_TRUE(planned.ok()) << planned.status();
    return *planned;
  }

  // A succeeded torch build for `archs` that published `filename` to the built-in index.
  farm::v1::Build Published(const std::string& id, const std::string& archs,
                            const std::string& filename) {
    farm::v1::Build b;
    b.set_id(id);
    b.set_kind(farm::v1::BUILD_KIND_WHEEL);
    b.set_state(farm::v1::BUILD_STATE_SUCCEEDED);
    *b.mutable_plan() = Plan("torchlike-2.9.1", archs).plan;
    b.mutable_wheel()->set_filename(filename);
    b.add_published_to("http://127.0.0.1:7421/files/ab12/" + filename);
    return b;
  }

  RecipeDirectory recipes_;
};

TEST_F(BuildDependenciesTest, TakesThePublishedWheelOfTheSameArchSetAndToolkit) {
  PlannedBuild vision = Plan("vision-0.24.1", "9.0;7.5");
  const std::string before = vision.plan.requirements_hash();
  const std::vector<farm::v1::Build> builds = {
      Published("t-other-set", "7.5",
                "torch-2.9.1+cu130.sm75-cp310-cp310-manylinux_2_35_aarch64.whl"),
      Published("t-match", "7.5;9.0",
                "torch-2.9.1+cu130.sm75.sm90-cp310-cp310-manylinux_2_35_aarch64.whl")};
  auto resolved = ResolveBuildDependencies(
      vision, {.builds = &builds, .recipes = &recipes_, .ref = "vision-0.24.1"});
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  ASSERT_EQ(resolved->farm_wheels.size(), 1u);
  EXPECT_EQ(resolved->farm_wheels[0].requirement(), "torch==2.9.1+cu130.sm75.sm90");
  EXPECT_EQ(resolved->farm_wheels[0].index_path(), "/sm75-sm90/simple/");
  EXPECT_EQ(resolved->farm_wheels[0].origin(), "build t-match");
  EXPECT_TRUE(resolved->stack_indexes.empty());
  // Every dependency with its source: the index's requirements, then the farm's.
  ASSERT_EQ(vision.plan.build_dependencies_size(), 2);
  EXPECT_EQ(vision.plan.build_dependencies(0).requirement(), "wheel");
  EXPECT_EQ(vision.plan.build_dependencies(0).source(), "index");
  const auto& torch = vision.plan.build_dependencies(1);
  EXPECT_EQ(torch.requirement(), "torch==2.9.1");
  EXPECT_EQ(torch.source(), "farm");
  EXPECT_EQ(torch.build_id(), "t-match");
  EXPECT_EQ(torch.wheel_version(), "2.9.1+cu130.sm75.sm90");
  // The farm wheel is part of the environment, and of its hash.
  EXPECT_NE(vision.plan.requirements_hash(), before);
}

TEST_F(BuildDependenciesTest, RefusesWhatTheFarmLacksNamingWhatItHasAndTheFix) {
  PlannedBuild vision = Plan("vision-0.24.1", "7.5;9.0");
  std::vector<farm::v1::Build> builds = {
      Published("t-75", "7.5", "torch-2.9.1+cu130.sm75-cp310-cp310-manylinux_2_35_aarch64.whl"),
      Published("t-py311", "7.5;9.0",
                "torch-2.9.1+cu130.sm75.sm90-cp311-cp311-manylinux_2_35_aarch64.whl")};
  auto refused = ResolveBuildDependencies(
      vision, {.builds = &builds, .recipes = &recipes_, .ref = "vision-0.24.1"});
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  const std::string message(refused.status().message());
  EXPECT_THAT(message, HasSubstr("the farm has no torch==2.9.1 wheel for this build (aarch64, "
                                 "CUDA 13.0, arch set sm75-sm90, Python 3.10)"));
  EXPECT_THAT(message, HasSubstr("2.9.1+cu130.sm75 (build t-75): it is for the arch set sm75, "
                                 "this build for sm75-sm90"));
  EXPECT_THAT(message, HasSubstr("(build t-py311): its tags (cp311) do not run on Python 3.10"));
  EXPECT_THAT(message,
              HasSubstr("Fix: farmctl submit torchlike-2.9.1 --archs \"7.5;9.0\" first, or submit "
                        "them as a stack: farmctl submit torchlike-2.9.1 vision-0.24.1 --archs "
                        "\"7.5;9.0\""));
  EXPECT_THAT(message,
              HasSubstr("; or let a package index supply it when the farm has none: add "
                        "[python.farm_fallback.torch] to recipes/vision.toml with index = \"URL\" "
                        "(left out: the build host's package index) and cuda = the CUDA release "
                        "that index's wheels were built for, which must be a CUDA 13 release like "
                        "this build's toolkit (13.0)"));

  // A failed build, or one published elsewhere only, is no farm wheel either.
  builds = {Published("t-failed", "7.5;9.0",
                      "torch-2.9.1+cu130.sm75.sm90-cp310-cp310-manylinux_2_35_aarch64.whl")};
  builds[0].set_state(farm::v1::BUILD_STATE_FAILED);
  PlannedBuild again = Plan("vision-0.24.1", "7.5;9.0");
  auto none = ResolveBuildDependencies(
      again, {.builds = &builds, .recipes = &recipes_, .ref = "vision-0.24.1"});
  EXPECT_THAT(none.status().message(), HasSubstr("the farm has built none of that version"));

  // Without an HTTP port the coordinator has no index to install from.
  PlannedBuild dark = Plan("vision-0.24.1", "7.5;9.0");
  auto no_http = ResolveBuildDependencies(
      dark, {.builds = &builds, .index_served = false, .recipes = &recipes_});
  EXPECT_THAT(no_http.status().message(),
              HasSubstr("Fix: start the coordinator with --http-listen"));
}

TEST_F(BuildDependenciesTest, AnEarlierPackageOfTheStackCountsBeforeItIsBuilt) {
  const PlannedBuild torch = Plan("torchlike-2.9.1", "7.5;9.0");
  PlannedBuild vision = Plan("vision-0.24.1", "7.5;9.0");
  const std::vector<farm::v1::Build> builds;
  auto resolved =
      ResolveBuildDependencies(vision, {.builds = &builds,
                                        .stack = {{.ref = "torchlike-2.9.1", .plan = torch.plan}},
                                        .recipes = &recipes_,
                                        .ref = "vision-0.24.1"});
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_THAT(resolved->stack_indexes, ElementsAre(0u));
  EXPECT_EQ(resolved->farm_wheels[0].requirement(), "torch==2.9.1+cu130.sm75.sm90");
  EXPECT_EQ(resolved->farm_wheels[0].origin(), "this stack's torchlike-2.9.1");
  EXPECT_EQ(vision.plan.build_dependencies(1).source(), "stack");
  EXPECT_EQ(vision.plan.build_dependencies(1).stack_recipe(), "torchlike-2.9.1");

  // The stack's torch for another set does not count.
  const PlannedBuild other = Plan("torchlike-2.9.1", "9.0");
  PlannedBuild vision75 = Plan("vision-0.24.1", "7.5;9.0");
  auto refused =
      ResolveBuildDependencies(vision75, {.builds = &builds,
                                          .stack = {{.ref = "torchlike-2.9.1", .plan = other.plan}},
                                          .recipes = &recipes_,
                                          .ref = "vision-0.24.1"});
  EXPECT_THAT(refused.status().message(),
              HasSubstr("this stack's torchlike-2.9.1: it is for the arch set sm90, this build for "
                        "sm75-sm90"));
}

// A farm requirement with a fallback: the farm's wheel when it has one, else the fallback's
// index, said in the plan with the CUDA release of its wheels and why; the build host gets
// it as a package-index wheel, and it is part of the environment's hash.
TEST_F(BuildDependenciesTest, AFallbackIsTakenOnlyWhenTheFarmHasNoneAndThePlanSaysWhy) {
  Recipe& vision = recipes_.recipes[1];
  vision.farm_requirements[0].fallback =
      FarmFallback{.index_url = "https://download.pytorch.org/whl/cu130", .cuda = {13, 0}};
  PlannedBuild planned = Plan("vision-0.24.1", "7.5;9.0");
  const std::vector<farm::v1::Build> none;
  auto resolved = ResolveBuildDependencies(
      planned, {.builds = &none, .recipes = &recipes_, .ref = "vision-0.24.1"});
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const auto& torch = planned.plan.build_dependencies(1);
  EXPECT_EQ(torch.requirement(), "torch==2.9.1");
  EXPECT_EQ(torch.source(), "index");
  EXPECT_EQ(torch.project(), "torch");
  EXPECT_EQ(torch.index_url(), "https://download.pytorch.org/whl/cu130");
  EXPECT_EQ(torch.fallback_cuda(), "13.0");
  EXPECT_EQ(torch.fallback_reason(),
            "the farm has no torch==2.9.1 wheel for this build (aarch64, CUDA 13.0, arch set "
            "sm75-sm90, Python 3.10); the farm has built none of that version");
  ASSERT_EQ(resolved->farm_wheels.size(), 1u);
  const farm::v1::FarmWheel& wheel = resolved->farm_wheels[0];
  EXPECT_EQ(wheel.requirement(), "torch==2.9.1");
  EXPECT_TRUE(wheel.from_package_index());
  EXPECT_EQ(wheel.package_index_url(), "https://download.pytorch.org/whl/cu130");
  EXPECT_EQ(wheel.cuda_version(), "13.0");
  EXPECT_EQ(wheel.index_path(), "");
  EXPECT_THAT(wheel.origin(), HasSubstr("the recipe's [python.farm_fallback.torch]: the farm has "
                                        "no torch==2.9.1 wheel for this build"));
  // The environment's hash names the index, as the build host's key does.
  auto contents = EnvironmentContentsFor(vision, planned.cuda);
  ASSERT_TRUE(contents.ok());
  contents->farm_wheels = {
      FallbackWheelEntry("torch==2.9.1", "https://download.pytorch.org/whl/cu130")};
  EXPECT_EQ(planned.plan.requirements_hash(), EnvironmentContentsHash(*contents));

  // The farm's wheel, when it has one, wins.
  PlannedBuild again = Plan("vision-0.24.1", "7.5;9.0");
  const std::vector<farm::v1::Build> builds = {Published(
      "t-match", "7.5;9.0", "torch-2.9.1+cu130.sm75.sm90-cp310-cp310-manylinux_2_35_aarch64.whl")};
  auto farm = ResolveBuildDependencies(
      again, {.builds = &builds, .recipes = &recipes_, .ref = "vision-0.24.1"});
  ASSERT_TRUE(farm.ok()) << farm.status();
  EXPECT_EQ(again.plan.build_dependencies(1).source(), "farm");
  EXPECT_FALSE(farm->farm_wheels[0].from_package_index());

  // A coordinator serving no index cannot hand out farm wheels: the fallback, saying so.
  PlannedBuild dark = Plan("vision-0.24.1", "7.5;9.0");
  auto fallback = ResolveBuildDependencies(
      dark, {.builds = &builds, .index_served = false, .recipes = &recipes_});
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_EQ(dark.plan.build_dependencies(1).source(), "index");
  EXPECT_THAT(dark.plan.build_dependencies(1).fallback_reason(),
              HasSubstr("this coordinator serves no index (no --http-listen)"));
}

// A fallback built for another CUDA major than the toolkit the build got is refused at plan
// time, naming the requirement, both releases and the fixes; only when it would be taken.
TEST_F(BuildDependenciesTest, AFallbackOfAnotherCudaMajorIsRefusedAtPlanTime) {
  Recipe& vision = recipes_.recipes[1];
  vision.farm_requirements[0].fallback = FarmFallback{.cuda = {12, 8}};
  PlannedBuild planned = Plan("vision-0.24.1", "7.5;9.0");
  const std::vector<farm::v1::Build> none;
  auto refused = ResolveBuildDependencies(
      planned, {.builds = &none, .recipes = &recipes_, .ref = "vision-0.24.1"});
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  const std::string message(refused.status().message());
  EXPECT_THAT(message,
              HasSubstr("recipe 'vision' takes torch==2.9.1 from the build host's package index "
                        "(PIP_INDEX_URL, else PyPI) ([python.farm_fallback.torch] in "
                        "recipes/vision.toml) when the farm has none, and that index's wheels "
                        "were built for CUDA 12.8 while this build's toolkit is CUDA 13.0"));
  EXPECT_THAT(message, HasSubstr("refuses the pair). The farm has no torch==2.9.1 wheel for "
                                 "this build (aarch64, CUDA 13.0, arch set sm75-sm90, Python "
                                 "3.10); the farm has built none of that version. Fix:"));
  EXPECT_THAT(message,
              HasSubstr("Fix: build it on the farm: farmctl submit torchlike-2.9.1 --archs "
                        "\"7.5;9.0\" first, or submit them as a stack: farmctl submit "
                        "torchlike-2.9.1 vision-0.24.1 --archs \"7.5;9.0\"; or name in "
                        "[python.farm_fallback.torch] an index whose wheels are built for CUDA "
                        "13; or give the build a CUDA 12 toolkit: lower [platform] cuda_max in "
                        "recipes/vision.toml below 13.0 (the recipe allows 12.6 to 13.0"));

  // The farm's own wheel needs no fallback: no refusal.
  PlannedBuild again = Plan("vision-0.24.1", "7.5;9.0");
  const std::vector<farm::v1::Build> builds = {Published(
      "t-match", "7.5;9.0", "torch-2.9.1+cu130.sm75.sm90-cp310-cp310-manylinux_2_35_aarch64.whl")};
  EXPECT_TRUE(ResolveBuildDependencies(
                  again, {.builds = &builds, .recipes = &recipes_, .ref = "vision-0.24.1"})
                  .ok());
}

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(FARM_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The shipped torch packages (recipes/*.toml) for the seed targets on both CPU arches, planned
// as the coordinator plans a submit, against build hosts of each arch with CUDA 13.0.
class ShippedTorchRecipesTest : public ::testing::Test {
 protected:
  static constexpr const char* kSeed = "7.5;9.0;12.1";

  void SetUp() override {
    auto loaded = LoadRecipeDirectory(std::string(FARM_SOURCE_DIR) + "/recipes");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_TRUE(loaded->errors.empty()) << loaded->errors.front();
    recipes_ = *std::move(loaded);
  }

  absl::StatusOr<PlannedBuild> Plan(const std::string& ref, const std::string& cpu_arch,
                                    const RecipeDirectory* recipes = nullptr) {
    return PlanWheelBuild(ref, kSeed, recipes == nullptr ? recipes_ : *recipes,
                          {Host("grace", "aarch64"), Host("epyc", "x86_64")},
                          {.cpu_arch = cpu_arch});
  }

  // torch 2.9.1 as the farm publishes it for the seed targets on `cpu_arch` (pytorch.toml
  // builds on aarch64 only; an x86_64 one stands for a farm with its own recipe for it).
  static farm::v1::Build FarmTorch(const std::string& cpu_arch) {
    farm::v1::Build b;
    b.set_id("torch-2.9.1-" + cpu_arch);
    b.set_kind(farm::v1::BUILD_KIND_WHEEL);
    b.set_state(farm::v1::BUILD_STATE_SUCCEEDED);
    farm::v1::BuildPlan* p = b.mutable_plan();
    p->set_package("torch");
    p->set_version("2.9.1");
    p->set_cpu_arch(cpu_arch);
    p->set_cuda_version("13.0");
    p->set_archs(kSeed);
    p->set_python_version("3.10");
    const std::string filename = absl::StrCat(
        "torch-2.9.1+cu130.sm75.sm90.sm121-cp310-cp310-manylinux_2_35_", cpu_arch, ".whl");
    b.mutable_wheel()->set_filename(filename);
    b.add_published_to("http://127.0.0.1:7421/files/ab12/" + filename);
    return b;
  }

  RecipeDirectory recipes_;
};

// Issue 44 item 5: torchvision 0.24.1 and torchaudio 2.9.1 plan for the seed targets on each
// arch when the farm has a torch 2.9.1 for that arch set, and on aarch64 as a stack after
// pytorch-2.9.1; with no such torch, a refusal naming what is missing and the fix.
TEST_F(ShippedTorchRecipesTest, TorchvisionAndTorchaudioPlanForTheSeedTargetsAgainstTheFarmsTorch) {
  for (const std::string ref : {"torchvision-0.24.1", "torchaudio-2.9.1"}) {
    for (const std::string cpu : {"aarch64", "x86_64"}) {
      SCOPED_TRACE(ref + " on " + cpu);
      const std::vector<farm::v1::Build> builds = {FarmTorch(cpu)};
      auto planned = Plan(ref, cpu);
      ASSERT_TRUE(planned.ok()) << planned.status();
      EXPECT_EQ(planned->plan.cuda_version(), "13.0");
      auto resolved =
          ResolveBuildDependencies(*planned, {.builds = &builds, .recipes = &recipes_, .ref = ref});
      ASSERT_TRUE(resolved.ok()) << resolved.status();
      const auto& torch =
          planned->plan.build_dependencies(planned->plan.build_dependencies_size() - 1);
      EXPECT_EQ(torch.requirement(), "torch==2.9.1");
      EXPECT_EQ(torch.source(), "farm");
      EXPECT_EQ(torch.wheel_version(), "2.9.1+cu130.sm75.sm90.sm121");
      EXPECT_EQ(torch.index_path(), "/sm75-sm90-sm121/simple/");
      ASSERT_EQ(resolved->farm_wheels.size(), 1u);
      EXPECT_EQ(resolved->farm_wheels[0].requirement(), "torch==2.9.1+cu130.sm75.sm90.sm121");

      // The farm's torch of the other CPU arch does not count: refused, naming it and the fix.
      const std::vector<farm::v1::Build> other = {
          FarmTorch(cpu == "aarch64" ? "x86_64" : "aarch64")};
      auto again = Plan(ref, cpu);
      ASSERT_TRUE(again.ok()) << again.status();
      auto refused =
          ResolveBuildDependencies(*again, {.builds = &other, .recipes = &recipes_, .ref = ref});
      ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
      const std::string message(refused.status().message());
      EXPECT_THAT(message, HasSubstr(absl::StrCat("the farm has no torch==2.9.1 wheel for this "
                                                  "build (",
                                                  cpu,
                                                  ", CUDA 13.0, arch set sm75-sm90-sm121, "
                                                  "Python 3.10)")));
      EXPECT_THAT(message, HasSubstr("): it is for "));
      EXPECT_THAT(message, HasSubstr(absl::StrCat(
                               "Fix: farmctl submit pytorch-2.9.1 --archs \"7.5;9.0;12.1\" first, "
                               "or submit them as a stack: farmctl submit pytorch-2.9.1 ",
                               ref, " --archs \"7.5;9.0;12.1\"")));
      EXPECT_THAT(message, HasSubstr(absl::StrCat("add [python.farm_fallback.torch] to ",
                                                  FARM_SOURCE_DIR, "/recipes/")));
    }
    // On aarch64, as a stack after pytorch-2.9.1: the stack's torch, before it is built.
    SCOPED_TRACE(ref + " in a stack");
    auto torch = Plan("pytorch-2.9.1", "aarch64");
    ASSERT_TRUE(torch.ok()) << torch.status();
    auto planned = Plan(ref, "aarch64");
    ASSERT_TRUE(planned.ok()) << planned.status();
    const std::vector<farm::v1::Build> none;
    auto resolved = ResolveBuildDependencies(
        *planned, {.builds = &none,
                   .stack = {{.ref = "pytorch-2.9.1", .plan = torch->plan}},
                   .recipes = &recipes_,
                   .ref = ref});
    ASSERT_TRUE(resolved.ok()) << resolved.status();
    const auto& dep = planned->plan.build_dependencies(planned->plan.build_dependencies_size() - 1);
    EXPECT_EQ(dep.source(), "stack");
    EXPECT_EQ(dep.stack_recipe(), "pytorch-2.9.1");
    EXPECT_EQ(dep.wheel_version(), "2.9.1+cu130.sm75.sm90.sm121");
  }
}

// The shipped 2.9 recipes keep no fallback: PyPI's torch 2.9.1 is CUDA 12.8, which a CUDA 13
// build cannot use. A farm with no torch refuses them, as before.
TEST_F(ShippedTorchRecipesTest, TheTorch29RecipesHaveNoFallback) {
  for (const Recipe& r : recipes_.recipes) {
    if (r.name != "torchvision" && r.name != "torchaudio") continue;
    ASSERT_EQ(r.farm_requirements.size(), 1u) << r.name;
    EXPECT_EQ(r.farm_requirements[0].Text(), "torch==2.9.1");
    EXPECT_FALSE(r.farm_requirements[0].fallback.has_value()) << r.name;
  }
}

// torchvision 0.26.0 against torch 2.11.0, whose PyPI wheels are CUDA 13.0: with a fallback
// of cuda "13.0" it plans from the package index when the farm has no torch 2.11.0; with a
// CUDA 12.x-only fallback (PyPI's 2.9.1 kind) against the 13.0 toolkit it is refused.
TEST_F(ShippedTorchRecipesTest, ATorch211RecipeFallsBackToThePackageIndexOfItsCudaMajor) {
  // The shipped torchvision 0.26.0 (its version table's own [python]), and the same with a
  // fallback to a CUDA 12.8 index.
  auto variant = [&](const std::string& fallback) {
    const std::string text = absl::StrReplaceAll(
        ReadSource("recipes/torchvision.toml"),
        {{"farm_fallback = { torch = { cuda = \"13.0\" } }", "farm_fallback = " + fallback}});
    return ParseRecipe(text, "/recipes/torchvision.toml");
  };
  for (const std::string cpu : {"aarch64", "x86_64"}) {
    SCOPED_TRACE(cpu);
    auto recipe = variant("{ torch = { cuda = \"13.0\" } }");
    ASSERT_TRUE(recipe.ok()) << recipe.status();
    RecipeDirectory recipes{.recipes = {*recipe}};
    auto planned = Plan("torchvision-0.26.0", cpu, &recipes);
    ASSERT_TRUE(planned.ok()) << planned.status();
    const std::vector<farm::v1::Build> builds = {FarmTorch(cpu)};  // 2.9.1: not 2.11.0
    auto resolved = ResolveBuildDependencies(
        *planned, {.builds = &builds, .recipes = &recipes, .ref = "torchvision-0.26.0"});
    ASSERT_TRUE(resolved.ok()) << resolved.status();
    const auto& torch =
        planned->plan.build_dependencies(planned->plan.build_dependencies_size() - 1);
    EXPECT_EQ(torch.requirement(), "torch==2.11.0");
    EXPECT_EQ(torch.source(), "index");
    EXPECT_EQ(torch.index_url(), "");  // the build host's
    EXPECT_EQ(torch.fallback_cuda(), "13.0");
    EXPECT_EQ(torch.fallback_reason(),
              absl::StrCat("the farm has no torch==2.11.0 wheel for this build (", cpu,
                           ", CUDA 13.0, arch set sm75-sm90-sm121, Python 3.11); the farm has "
                           "built none of that version"));
    EXPECT_TRUE(resolved->farm_wheels[0].from_package_index());
    EXPECT_EQ(resolved->farm_wheels[0].requirement(), "torch==2.11.0");

    auto cu128 = variant(
        "{ torch = { index = \"https://download.pytorch.org/whl/cu128\", cuda = \"12.8\" } }");
    ASSERT_TRUE(cu128.ok()) << cu128.status();
    RecipeDirectory old{.recipes = {*cu128}};
    auto refused_plan = Plan("torchvision-0.26.0", cpu, &old);
    ASSERT_TRUE(refused_plan.ok()) << refused_plan.status();
    auto refused = ResolveBuildDependencies(
        *refused_plan, {.builds = &builds, .recipes = &old, .ref = "torchvision-0.26.0"});
    ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
    const std::string message(refused.status().message());
    EXPECT_THAT(message, HasSubstr("takes torch==2.11.0 from the package index "
                                   "https://download.pytorch.org/whl/cu128"));
    EXPECT_THAT(message, HasSubstr("built for CUDA 12.8 while this build's toolkit is CUDA 13.0"));
    EXPECT_THAT(message, HasSubstr("add a recipe that builds torch==2.11.0 and submit it first "
                                   "with --archs \"7.5;9.0;12.1\""));
    // sm_121 needs CUDA >= 12.9: a 12.x toolkit is still within the recipe's range.
    EXPECT_THAT(message, HasSubstr("lower [platform] cuda_max in /recipes/torchvision.toml below "
                                   "13.0"));
  }
}

}  // namespace
}  // namespace farm::coordinator
