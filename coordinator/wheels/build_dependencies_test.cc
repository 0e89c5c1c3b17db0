#include "coordinator/wheels/build_dependencies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/recipes/python_environment.h"

namespace farm::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<std::string> kSms = {"sm_75", "sm_80", "sm_90", "sm_121"};

farm::v1::Worker Host(const std::string& name) {
  farm::v1::Worker w;
  w.set_name(name);
  auto* caps = w.mutable_capabilities();
  caps->set_os("linux");
  caps->set_cpu_arch("aarch64");
  caps->set_glibc("2.35");
  auto* tk = caps->add_cuda();
  tk->set_version("13.0");
  for (const auto& sm : kSms) tk->add_sms(sm);
  auto* p = caps->add_python();
  p->set_version("3.10");
  p->set_path("/usr/bin/python3.10");
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
  EXPECT_THAT(message, HasSubstr("move \"torch==2.9.1\" from farm_requirements to requirements in "
                                 "recipes/vision.toml"));

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

}  // namespace
}  // namespace farm::coordinator
